import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { IddqueueError, InvalidIdentifierError } from '../errors.js'
import { generateInitSql } from '../migration/generate-sql.js'
import { quoteIdentifier } from './identifier.js'
import { namespace, toNamespace } from './namespace.js'

const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.stringMatching(/^[a-z_][a-z0-9_]{0,70}$/),
  fc.constantFrom('pg_x', 'a"; drop schema public; --', '\u0000', 'é', 'A', '1abc', ''),
  fc.anything({ withNullPrototype: true, withBigInt: true }),
)

describe('namespace, under random schema names and prefixes', () => {
  it('accepts or throws InvalidIdentifierError; what it accepts quotes to identifiers that stay one token', () => {
    fc.assert(
      fc.property(
        fc.record({ schema: hostile, prefix: hostile }, { requiredKeys: [] }),
        (options) => {
          let ns: ReturnType<typeof namespace>
          try {
            ns = namespace(options as never)
          } catch (error) {
            expect(InvalidIdentifierError.isInstance(error), String(error)).toBe(true)
            return
          }
          // Lowercase ASCII, digits and underscores only: nothing to escape, no way out of the quotes.
          expect(ns.schema).toMatch(/^[a-z_][a-z0-9_]*$/)
          expect(ns.prefix).toMatch(/^[a-z0-9_]*$/)
          expect(ns.table('messages')).toBe(`"${ns.schema}"."${ns.prefix}messages"`)
          expect(toNamespace(ns)).toBe(ns)
        },
      ),
      { numRuns: 3_000 },
    )
  })

  it('generateInitSql refuses a bad namespace with a typed error and never emits SQL for it', () => {
    fc.assert(
      fc.property(hostile, (schema) => {
        try {
          const sql = generateInitSql({ namespace: { schema: schema as never } })
          expect(sql).toContain(`"${namespace({ schema: schema as never }).schema}"`)
        } catch (error) {
          expect(IddqueueError.isInstance(error), String(error)).toBe(true)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('quoteIdentifier doubles every quote, so the result is one identifier', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (name) => {
        let quoted: string
        try {
          quoted = quoteIdentifier(name)
        } catch (error) {
          expect(IddqueueError.isInstance(error), String(error)).toBe(true)
          return
        }
        expect(quoted.startsWith('"') && quoted.endsWith('"')).toBe(true)
        expect(quoted.slice(1, -1).replaceAll('""', '')).not.toContain('"')
      }),
    )
  })
})
