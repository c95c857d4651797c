import { describe, expect, it } from 'vitest'
import { createBroker, InvalidOptionError } from '../src/index.js'

// Database-free: these options are refused before any connection is opened.
describe('createBroker connection options', () => {
  it('says that url was given but undefined, and what to set', () => {
    const env: Record<string, string | undefined> = {}
    const create = () => createBroker({ url: env.DATABASE_URL })
    expect(create).toThrow(InvalidOptionError)
    expect(create).toThrow(
      'Invalid broker options: url was given but is undefined; set DATABASE_URL',
    )
  })

  it('still counts the connections given when none is', () => {
    expect(() => createBroker({})).toThrow(
      'Invalid broker options: give exactly one of url, sql (a postgres.js instance) or db (a Kysely instance); got 0',
    )
  })

  it('refuses a URL that is not PostgreSQL', () => {
    expect(() => createBroker({ url: 'mysql://root@localhost/app' })).toThrow(
      'Invalid url: expected a postgres:// or postgresql:// connection string',
    )
  })
})
