import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { afterEach, describe, expect, inject, it } from 'vitest'
import {
  createTestDatabase,
  prepareTemplateDatabase,
  TestDatabaseError,
  waitFor,
} from '../src/index.js'
import { databaseExists, withSql } from './helpers.js'

const serverUrl = inject('iddqueueServerUrl')
const templates: string[] = []

function templateName(): string {
  const name = `iddqueue_tpl_${randomBytes(6).toString('hex')}`
  templates.push(name)
  return name
}

function createTable(table: string, calls: { count: number }) {
  return async (url: string) => {
    calls.count++
    await withSql(url, (sql) => sql.unsafe(`create table ${table} (id int)`))
  }
}

async function tableInClone(template: string, table: string): Promise<boolean> {
  const clone = await createTestDatabase(serverUrl, { template })
  try {
    const rows = await withSql(clone.url, (sql) => sql`select to_regclass(${table}) as t`)
    return rows[0]?.t === table
  } finally {
    await clone.drop()
  }
}

afterEach(async () => {
  await withSql(serverUrl, async (sql) => {
    for (const name of templates.splice(0)) {
      await sql`drop database if exists ${sql(name)} with (force)`
    }
  })
})

describe('prepareTemplateDatabase', () => {
  it('builds the template once, and clones have what setup made', async () => {
    const name = templateName()
    const calls = { count: 0 }
    const options = { name, fingerprint: 'a', setup: createTable('orders', calls) }
    expect(await prepareTemplateDatabase(serverUrl, options)).toBe(name)
    expect(await prepareTemplateDatabase(serverUrl, options)).toBe(name)
    expect(calls.count).toBe(1)
    expect(await tableInClone(name, 'orders')).toBe(true)
  })

  it('rebuilds the template when the fingerprint changes', async () => {
    const name = templateName()
    const calls = { count: 0 }
    await prepareTemplateDatabase(serverUrl, {
      name,
      fingerprint: 'v1',
      setup: createTable('v1_table', calls),
    })
    await prepareTemplateDatabase(serverUrl, {
      name,
      fingerprint: 'v2',
      setup: createTable('v2_table', calls),
    })
    expect(calls.count).toBe(2)
    expect(await tableInClone(name, 'v2_table')).toBe(true)
    expect(await tableInClone(name, 'v1_table')).toBe(false)
    // Back to v2 again: nothing to do.
    await prepareTemplateDatabase(serverUrl, {
      name,
      fingerprint: 'v2',
      setup: createTable('x', calls),
    })
    expect(calls.count).toBe(2)
  })

  it('runs setup exactly once for three concurrent callers', async () => {
    const name = templateName()
    const calls = { count: 0 }
    const create = createTable('shared', calls)
    const setup = async (url: string) => {
      // Build only once the two other callers wait on the template's lock.
      await withSql(serverUrl, (sql) =>
        waitFor(
          async () => {
            const [row] = await sql`select count(*)::int as n from pg_stat_activity
              where datname = current_database() and wait_event = 'advisory'`
            return (row?.n ?? 0) >= 2
          },
          { timeoutMs: 10_000, message: 'two callers waiting on the lock' },
        ),
      )
      await create(url)
    }
    const options = { name, fingerprint: 'same', setup }
    const results = await Promise.all(
      [1, 2, 3].map(() => prepareTemplateDatabase(serverUrl, options)),
    )
    expect(results).toEqual([name, name, name])
    expect(calls.count).toBe(1)
    expect(await tableInClone(name, 'shared')).toBe(true)
  })

  it('leaves no session connected to the template, even one setup left open', async () => {
    const name = templateName()
    let leaked: postgres.Sql | undefined
    await prepareTemplateDatabase(serverUrl, {
      name,
      setup: async (url) => {
        leaked = postgres(url, { max: 1 })
        await leaked`create table t (id int)`
      },
    })
    const sessions = await withSql(
      serverUrl,
      (sql) => sql`select count(*)::int as n from pg_stat_activity where datname = ${name}`,
    )
    expect(sessions[0]?.n).toBe(0)
    await leaked?.end().catch(() => {})
  })

  it('drops a half-built template when setup throws, and builds it again next time', async () => {
    const name = templateName()
    const error = await prepareTemplateDatabase(serverUrl, {
      name,
      setup: async () => {
        throw new Error('migration 3 failed')
      },
    }).catch((e) => e)
    expect(TestDatabaseError.isInstance(error)).toBe(true)
    expect(error.message).toContain('migration 3 failed')
    expect(error.cause).toBeInstanceOf(Error)
    expect(await databaseExists(serverUrl, name)).toBe(false)

    const calls = { count: 0 }
    await prepareTemplateDatabase(serverUrl, { name, setup: createTable('ok', calls) })
    expect(calls.count).toBe(1)
  })

  it('rejects a template name that is not a lowercase identifier', async () => {
    const error = await prepareTemplateDatabase(serverUrl, {
      name: 'Template"; drop',
      setup: async () => {},
    }).catch((e) => e)
    expect(TestDatabaseError.isInstance(error)).toBe(true)
    expect(error.message).toContain('"Template\\"; drop"')
  })
})
