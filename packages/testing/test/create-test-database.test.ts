import { describe, expect, inject, it } from 'vitest'
import { createTestDatabase, TestDatabaseError, waitFor } from '../src/index.js'
import { databaseExists, withSql } from './helpers.js'

const serverUrl = inject('iddqueueServerUrl')

describe('createTestDatabase', () => {
  it('creates a uniquely named database, reachable at its url, and drops it', async () => {
    const db = await createTestDatabase(serverUrl)
    expect(db.name).toMatch(new RegExp(`^iddqueue_test_${process.pid}_[0-9a-f]{16}$`))
    expect(await databaseExists(serverUrl, db.name)).toBe(true)
    const current = await withSql(db.url, (sql) => sql`select current_database() as name`)
    expect(current[0]?.name).toBe(db.name)

    await db.drop()
    expect(await databaseExists(serverUrl, db.name)).toBe(false)
    await db.drop() // a second drop is harmless
  })

  it('gives two calls two different databases', async () => {
    const [a, b] = await Promise.all([createTestDatabase(serverUrl), createTestDatabase(serverUrl)])
    expect(a.name).not.toBe(b.name)
    await Promise.all([a.drop(), b.drop()])
  })

  it('uses the prefix, and drop() terminates sessions still connected', async () => {
    const db = await createTestDatabase(serverUrl, { prefix: 'custom_prefix' })
    expect(db.name.startsWith(`custom_prefix_${process.pid}_`)).toBe(true)
    const sql = (await import('postgres')).default(db.url, { max: 1 })
    await sql`select 1`
    await db.drop()
    expect(await databaseExists(serverUrl, db.name)).toBe(false)
    await sql.end().catch(() => {})
  })

  it('rejects a prefix that is not a lowercase identifier, naming it', async () => {
    const error = await createTestDatabase(serverUrl, { prefix: 'Bad-Prefix' }).catch((e) => e)
    expect(TestDatabaseError.isInstance(error)).toBe(true)
    expect(error.message).toContain('"Bad-Prefix"')
  })

  it('clones a template that another session is still leaving', async () => {
    const source = await createTestDatabase(serverUrl, { prefix: 'iddqueue_source' })
    await withSql(source.url, (sql) => sql`create table copied (id int)`)
    const blocker = (await import('postgres')).default(source.url, { max: 1 })
    await blocker`select 1`
    // CREATE DATABASE waits for the blocker to leave: end it once the clone is under way.
    const cloning = createTestDatabase(serverUrl, { template: source.name })
    await withSql(serverUrl, (sql) =>
      waitFor(
        async () =>
          (
            await sql`select 1 from pg_stat_activity
              where state = 'active' and query ilike ${`create database%${source.name}%`}`
          ).length > 0,
        { timeoutMs: 10_000, message: 'the CREATE DATABASE to wait for the template' },
      ),
    )
    await blocker.end()
    const clone = await cloning
    const tables = await withSql(clone.url, (sql) => sql`select to_regclass('copied') as t`)
    expect(tables[0]?.t).toBe('copied')
    await Promise.all([clone.drop(), source.drop()])
  })

  it('gives up with a clear error when the template stays in use', async () => {
    const source = await createTestDatabase(serverUrl, { prefix: 'iddqueue_source' })
    const blocker = (await import('postgres')).default(source.url, { max: 1 })
    await blocker`select 1`
    try {
      const error = await createTestDatabase(serverUrl, { template: source.name }).catch((e) => e)
      expect(TestDatabaseError.isInstance(error)).toBe(true)
      expect(error.message).toMatch(/after 3 attempts.*being accessed by other users/)
    } finally {
      await blocker.end()
      await source.drop()
    }
  })
})
