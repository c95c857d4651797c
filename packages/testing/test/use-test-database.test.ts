import { describe, expect, inject, it } from 'vitest'
import { TestDatabaseError } from '../src/index.js'
import { useTestDatabase } from '../src/vitest.js'
import { databaseExists, withSql } from './helpers.js'

const db = useTestDatabase()

let earlyError: unknown
try {
  void db.url
} catch (error) {
  earlyError = error
}

describe('useTestDatabase', () => {
  it('throws a clear error when url is read before beforeAll', () => {
    expect(TestDatabaseError.isInstance(earlyError)).toBe(true)
    expect((earlyError as Error).message).toMatch(/read it inside a test or a hook/)
  })

  it("gives the file its own database, cloned from the global setup's template", async () => {
    expect(inject('iddqueueTemplate')).toBe('iddqueue_testing_suite_template')
    const rows = await withSql(db.url, async (sql) => {
      const [current] = await sql`select current_database() as name`
      const widgets = await sql`select id from widgets order by id`
      return { name: current?.name as string, ids: widgets.map((row) => row.id) }
    })
    expect(rows.name).toMatch(new RegExp(`^iddqueue_test_${process.pid}_`))
    expect(rows.ids).toEqual([1, 2])
    expect(await databaseExists(inject('iddqueueServerUrl'), rows.name)).toBe(true)
  })
})
