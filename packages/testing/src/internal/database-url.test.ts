import { describe, expect, it } from 'vitest'
import { TestDatabaseError } from '../test-database-error.js'
import { databaseUrl, redactUrl } from './database-url.js'

describe('databaseUrl', () => {
  it('replaces only the database', () => {
    expect(databaseUrl('postgres://u:p@127.0.0.1:5432/test?sslmode=disable', 'other')).toBe(
      'postgres://u:p@127.0.0.1:5432/other?sslmode=disable',
    )
    expect(databaseUrl('postgresql://h', 'x')).toBe('postgresql://h/x')
  })

  it('rejects what is not a postgres URL, redacting the password', () => {
    expect(() => databaseUrl('mysql://u:secret@h/db', 'x')).toThrow(
      'serverUrl must start with postgres:// or postgresql://, got "mysql://u:***@h/db"',
    )
    expect(() => databaseUrl('not a url', 'x')).toThrow(TestDatabaseError)
  })

  it('redacts passwords only', () => {
    expect(redactUrl('postgres://u:secret@h/db')).toBe('postgres://u:***@h/db')
    expect(redactUrl('postgres://u@h/db')).toBe('postgres://u@h/db')
  })
})
