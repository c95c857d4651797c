import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { IddqueueError, InvalidIdentifierError, InvalidOptionError } from '../errors.js'
import { namespace } from '../namespace/namespace.js'
import { generateGrantsSql } from './generate-grants-sql.js'

const MODES = ['producer', 'worker', 'admin'] as const

/** Any value a caller might pass where a string is expected. */
const anything = fc.oneof(
  fc.anything({ withNullPrototype: true, withBigInt: true, withDate: true }),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -1, 0.5, () => {}, Symbol('s')),
)

/**
 * Role names PostgreSQL accepts quoted: 1 to 63 bytes, no NUL, well-formed
 * UTF-16, without the dollar-quote tag the statements use. Line breaks are
 * left out here (a quoted identifier may hold one, which breaks the
 * one-statement-a-line shape checked below); the test after that property
 * covers them.
 */
const validRole = fc
  .oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
    fc.constantFrom(
      'app',
      'App',
      'a"b',
      '""',
      "o'brien",
      "'; drop table iddqueue.messages; --",
      '"; drop role x; --',
      '$1',
      '$iddqueue',
      'iddqueue$',
      '\\',
      'é'.repeat(31),
      'x'.repeat(63),
    ),
  )
  .filter(
    (role) =>
      Buffer.byteLength(role) <= 63 &&
      !role.includes('\u0000') &&
      !role.includes('$iddqueue$') &&
      role.isWellFormed() &&
      !/[\n\r]/.test(role),
  )

const badRole = fc.oneof(
  fc.constantFrom(
    '',
    '\u0000',
    'a\u0000',
    '\ud800',
    'a\udc00b',
    'x'.repeat(64),
    'é'.repeat(32),
    '$iddqueue$',
    'a$iddqueue$b',
  ),
  fc.string({ unit: 'grapheme', minLength: 64, maxLength: 200 }),
  fc.string({ minLength: 1, maxLength: 20 }).map((s) => `${s}\u0000${s}`),
  anything.filter((v) => typeof v !== 'string'),
)

const badMode = fc
  .oneof(
    fc.constantFrom('Producer', 'WORKER', 'admin ', '', 'owner', 'superuser', '\u0000'),
    fc.string({ unit: 'binary', maxLength: 20 }),
    anything,
  )
  .filter((mode) => !MODES.includes(mode as never))

const validNamespace = fc.record(
  {
    schema: fc.stringMatching(/^[a-z_][a-z0-9_]{0,62}$/).filter((s) => !s.startsWith('pg_')),
    prefix: fc.stringMatching(/^([a-z_][a-z0-9_]{0,31})?$/),
  },
  { requiredKeys: [] },
)

const badNamespace = fc.oneof(
  fc.record(
    {
      schema: fc.oneof(
        fc.constantFrom('', 'Jobs', 'pg_jobs', '1abc', 'a"b', 'a;b', 'x'.repeat(64), '\u0000'),
        fc
          .string({ unit: 'binary', maxLength: 70 })
          .filter((v) => !/^[a-z_][a-z0-9_]{0,62}$/.test(v) || v.startsWith('pg_')),
        // null, like undefined, means the default.
        anything.filter((v) => v !== undefined && v !== null && typeof v !== 'string'),
      ),
    },
    { requiredKeys: ['schema'] },
  ),
  fc.record(
    {
      prefix: fc.oneof(
        fc.constantFrom('A', '1', 'a-b', 'x'.repeat(33), '"', '\u0000'),
        fc
          .string({ unit: 'binary', maxLength: 40 })
          .filter((v) => v !== '' && !/^[a-z_][a-z0-9_]{0,31}$/.test(v)),
        anything.filter((v) => v !== undefined && v !== null && typeof v !== 'string'),
      ),
    },
    { requiredKeys: ['prefix'] },
  ),
)

function thrown(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('expected the call to throw')
}

/** The statement lines of a grants script for `mode`, with a plain role: what any role must give. */
const shape = Object.fromEntries(
  MODES.map((mode) => [mode, generateGrantsSql({ role: 'r', mode }).trimEnd().split('\n').length]),
) as Record<(typeof MODES)[number], number>

describe('generateGrantsSql, under random roles, modes and namespaces', () => {
  it('refuses a bad role with InvalidIdentifierError naming the role, and emits no SQL', () => {
    fc.assert(
      fc.property(badRole, fc.constantFrom(...MODES), (role, mode) => {
        const error = thrown(() => generateGrantsSql({ role: role as never, mode }))
        expect(InvalidIdentifierError.isInstance(error), String(error)).toBe(true)
        expect((error as Error).message).toContain('role')
      }),
      { numRuns: 300 },
    )
  })

  it('refuses a bad mode with InvalidOptionError naming the mode', () => {
    fc.assert(
      fc.property(badMode, (mode) => {
        const error = thrown(() => generateGrantsSql({ role: 'app', mode: mode as never }))
        expect(InvalidOptionError.isInstance(error), String(error)).toBe(true)
        expect((error as Error).message).toContain('mode')
      }),
      { numRuns: 300 },
    )
  })

  it('refuses a bad namespace with InvalidIdentifierError naming the schema or prefix', () => {
    fc.assert(
      fc.property(badNamespace, fc.constantFrom(...MODES), (ns, mode) => {
        const error = thrown(() => generateGrantsSql({ role: 'app', mode, namespace: ns as never }))
        expect(InvalidIdentifierError.isInstance(error), String(error)).toBe(true)
        expect((error as Error).message).toMatch('schema' in ns ? /schema/ : /prefix/)
      }),
      { numRuns: 300 },
    )
  })

  it('refuses options that are not an object with InvalidOptionError', () => {
    fc.assert(
      fc.property(
        anything.filter((v) => typeof v !== 'object' || v === null),
        (options) => {
          const error = thrown(() => generateGrantsSql(options as never))
          expect(InvalidOptionError.isInstance(error), String(error)).toBe(true)
        },
      ),
      { numRuns: 100 },
    )
  })

  it('never throws anything but an IddqueueError', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            role: fc.oneof(validRole, badRole),
            mode: fc.oneof(fc.constantFrom(...MODES), badMode),
            namespace: fc.oneof(validNamespace, badNamespace, anything),
          },
          { requiredKeys: [] },
        ),
        (options) => {
          try {
            generateGrantsSql(options as never)
          } catch (error) {
            expect(IddqueueError.isInstance(error), String(error)).toBe(true)
          }
        },
      ),
      { numRuns: 500 },
    )
  })

  it('keeps a role with line breaks inside its header comment and its quoted identifiers', () => {
    for (const role of [
      'x\ncreate table public.pwned(); --',
      'x\rcreate table public.pwned(); --',
    ]) {
      const sql = generateGrantsSql({ role, mode: 'producer' })
      const quoted = `"${role}"`
      // The comment ends at its own line end: the role in it is JSON, with the break escaped.
      const [comment, rest] = [sql.slice(0, sql.indexOf('\n')), sql.slice(sql.indexOf('\n') + 1)]
      expect(comment).toBe(
        `-- iddqueue: producer privileges for role ${JSON.stringify(role)} on namespace "iddqueue" (prefix "")`,
      )
      expect(rest.startsWith(`grant usage on schema "iddqueue" to ${quoted};`)).toBe(true)
      // Everywhere else it appears, it is the whole quoted identifier.
      expect(rest.split('pwned').length).toBe(rest.split(quoted).length)
    }
  })

  it('accepts every valid role, mode and namespace; the role stays one quoted identifier on fixed lines', () => {
    fc.assert(
      fc.property(validRole, fc.constantFrom(...MODES), validNamespace, (role, mode, ns) => {
        const sql = generateGrantsSql({ role, mode, namespace: ns })
        const { schema } = namespace(ns)
        const quoted = `"${role.replaceAll('"', '""')}"`
        const lines = sql.trimEnd().split('\n')
        // The same statements, one a line, whatever the role.
        expect(lines).toHaveLength(shape[mode])
        expect(lines[0]!.startsWith(`-- iddqueue: ${mode} privileges for role `)).toBe(true)
        expect(lines[1]).toBe(`grant usage on schema "${schema}" to ${quoted};`)
        for (const line of lines.slice(2)) {
          // A dollar-quoted block holding one literal: the tag opens and closes it, nothing else.
          expect(line.startsWith('do $iddqueue$ begin if to_regclass(')).toBe(true)
          expect(line.endsWith(' end if; end $iddqueue$;')).toBe(true)
          expect(line.split('$iddqueue$')).toHaveLength(3)
          // Inside `execute '...'`, every quote of the role is doubled: the literal ends where it should.
          const literal = line.slice(line.indexOf("execute '") + 9, line.lastIndexOf("'; end if;"))
          expect(literal.replaceAll("''", '')).not.toContain("'")
          const grant = literal.replaceAll("''", "'")
          expect(grant.startsWith('grant ')).toBe(true)
          expect(grant.endsWith(` to ${quoted}`)).toBe(true)
        }
      }),
      { numRuns: 300 },
    )
  })
})
