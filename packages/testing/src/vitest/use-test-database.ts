import { afterAll, beforeAll, inject } from 'vitest'
import { type CreatedTestDatabase, createTestDatabase } from '../create-test-database.js'
import { TestDatabaseError } from '../test-database-error.js'

/**
 * The database of one test file, from {@link useTestDatabase}.
 *
 * @example
 * const db: UsedTestDatabase = useTestDatabase()
 * it('connects', async () => {
 *   const sql = postgres(db.url)
 *   await sql`select 1`
 *   await sql.end()
 * })
 */
export interface UsedTestDatabase {
  /** The database URL; throws if read before the file's `beforeAll` hooks ran. */
  readonly url: string
}

/**
 * Gives the calling test file its own fresh database.
 *
 * Call it at the top of a test file. Its `beforeAll` creates the database on
 * the server started by {@link createGlobalSetup}, cloned from the template
 * when there is one; its `afterAll` drops it. Read `url` inside tests and
 * hooks, not at the top level, where the database does not exist yet.
 *
 * @example
 * import { useTestDatabase } from '@iddqueue/testing/vitest'
 *
 * const db = useTestDatabase()
 *
 * it('stores orders', async () => {
 *   const sql = postgres(db.url)
 *   await sql`insert into orders (id) values (1)`
 *   await sql.end()
 * })
 */
export function useTestDatabase(): UsedTestDatabase {
  let database: CreatedTestDatabase | undefined

  beforeAll(async () => {
    const serverUrl = inject('iddqueueServerUrl')
    if (typeof serverUrl !== 'string' || serverUrl === '') {
      throw new TestDatabaseError(
        "useTestDatabase found no 'iddqueueServerUrl' to inject: add a globalSetup file whose default export is createGlobalSetup() to vitest.config.ts",
      )
    }
    database = await createTestDatabase(serverUrl, {
      template: inject('iddqueueTemplate') || undefined,
    })
  })

  afterAll(async () => {
    const created = database
    database = undefined
    await created?.drop()
  })

  return {
    get url() {
      if (database === undefined) {
        throw new TestDatabaseError(
          'useTestDatabase().url was read outside its lifetime: read it inside a test or a hook, after beforeAll ran and before afterAll',
        )
      }
      return database.url
    },
  }
}
