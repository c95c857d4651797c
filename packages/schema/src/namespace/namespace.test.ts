import { describe, expect, it } from 'vitest'
import { IddqueueError, InvalidIdentifierError } from '../errors.js'
import { MAX_CHANNEL_BYTES, namespace } from './namespace.js'

describe('namespace', () => {
  it('defaults to schema iddqueue and no prefix', () => {
    const ns = namespace()
    expect(ns.schema).toBe('iddqueue')
    expect(ns.prefix).toBe('')
    expect(ns.table('messages')).toBe('"iddqueue"."messages"')
    expect(ns.tableName('workers')).toBe('workers')
    expect(ns.channel('wake')).toBe('iddqueue:iddqueue::wake')
  })

  it('quotes schema and prefixed tables', () => {
    const ns = namespace({ schema: 'jobs', prefix: 'billing_' })
    expect(ns.table('messages')).toBe('"jobs"."billing_messages"')
    expect(ns.relation('messages_ready')).toBe('"billing_messages_ready"')
    expect(ns.channel('control')).toBe('iddqueue:jobs:billing_:control')
  })

  const hostileSchemas: [string, unknown][] = [
    ['a double quote', 'app"; drop table users; --'],
    ['a semicolon', 'app;drop'],
    ['a space', 'my app'],
    ['uppercase', 'App'],
    ['a unicode lookalike', 'аpp'],
    ['empty', ''],
    ['a leading digit', '1app'],
    ['a dot', 'public.app'],
    ['64 bytes', 'a'.repeat(64)],
    ['a reserved pg_ name', 'pg_catalog'],
    ['a non-string', 42],
    ['a backslash', 'app\\x'],
    ['a NUL byte', 'app\u0000'],
  ]
  it.each(hostileSchemas)('refuses a schema with %s, naming the value', (_label, schema) => {
    const attempt = () => namespace({ schema: schema as string })
    expect(attempt).toThrow(InvalidIdentifierError)
    expect(attempt).toThrow(
      `Invalid schema name ${typeof schema === 'string' ? JSON.stringify(schema) : schema}`,
    )
  })

  const hostilePrefixes: [string, string][] = [
    ['a double quote', 'x"'],
    ['a semicolon', 'x;'],
    ['a space', 'x '],
    ['uppercase', 'X_'],
    ['a hyphen', 'x-'],
    ['33 bytes', 'p'.repeat(33)],
    ['a leading digit', '9_'],
  ]
  it.each(hostilePrefixes)('refuses a prefix with %s', (_label, prefix) => {
    expect(() => namespace({ prefix })).toThrow(`Invalid table prefix ${JSON.stringify(prefix)}`)
  })

  it('accepts the longest names and keeps derived identifiers within 63 bytes', () => {
    const ns = namespace({ schema: 's'.repeat(63), prefix: 'p'.repeat(32) })
    expect(ns.tableName('deduplication').length).toBeLessThanOrEqual(63)
    expect(ns.relation('deduplication_expires').length - 2).toBeLessThanOrEqual(63)
    const channel = ns.channel('control')
    expect(Buffer.byteLength(channel)).toBeLessThanOrEqual(MAX_CHANNEL_BYTES)
    expect(channel).toBe(ns.channel('control'))
    expect(channel).not.toBe(ns.channel('wake'))
  })

  it('gives distinct channels and lock keys to namespaces that concatenate alike', () => {
    const a = namespace({ schema: 'iddqueue', prefix: 'a_' })
    const b = namespace({ schema: 'iddqueue_a', prefix: '' })
    expect(a.channel('wake')).not.toBe(b.channel('wake'))
    expect(a.lockKey('purge')).not.toBe(b.lockKey('purge'))
    expect(a.lockKey('purge')).toBe(
      namespace({ schema: 'iddqueue', prefix: 'a_' }).lockKey('purge'),
    )
    expect(a.lockKey('purge')).not.toBe(a.lockKey('recover'))
  })

  it('gives signed 64-bit lock keys', () => {
    for (const purpose of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) {
      const key = namespace().lockKey(purpose)
      expect(key).toBeGreaterThanOrEqual(-(2n ** 63n))
      expect(key).toBeLessThan(2n ** 63n)
    }
  })

  it('throws errors recognisable across package copies', () => {
    try {
      namespace({ schema: 'Bad' })
      expect.unreachable()
    } catch (error) {
      expect(InvalidIdentifierError.isInstance(error)).toBe(true)
      expect(IddqueueError.isInstance(error)).toBe(true)
      expect((error as Error).name).toBe('InvalidIdentifierError')
      expect(Symbol.for('iddqueue.error.InvalidIdentifierError') in (error as object)).toBe(true)
    }
  })
})
