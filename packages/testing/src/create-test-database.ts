import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import postgres from 'postgres'
import { connect } from './internal/connect.js'
import { assertDatabaseName } from './internal/database-name.js'
import { databaseUrl, parseServerUrl } from './internal/database-url.js'
import { dropDatabase } from './internal/drop-database.js'
import { TestDatabaseError } from './test-database-error.js'

/**
 * Options of {@link createTestDatabase}.
 *
 * @example
 * const options: CreateTestDatabaseOptions = { template: 'myapp_template', prefix: 'myapp_test' }
 */
export interface CreateTestDatabaseOptions {
  /**
   * A database to clone (`CREATE DATABASE ... TEMPLATE <template>`), usually
   * the name returned by {@link prepareTemplateDatabase}. Default: none, an
   * empty database cloned from `template1`.
   */
  readonly template?: string | undefined
  /**
   * The start of the database name, a lowercase identifier. Default
   * `'iddqueue_test'`. {@link dropStaleTestDatabases} finds leftovers by it.
   */
  readonly prefix?: string | undefined
}

/**
 * A database made by {@link createTestDatabase}.
 *
 * @example
 * const db: CreatedTestDatabase = await createTestDatabase(serverUrl)
 * console.log(db.name, db.url)
 * await db.drop()
 */
export interface CreatedTestDatabase {
  /** The server URL with its database path replaced by {@link CreatedTestDatabase.name}. */
  readonly url: string
  /** The database name, `<prefix>_<pid>_<16 hex digits>`. */
  readonly name: string
  /** Drops the database, terminating any connection still open to it. Safe to call twice. */
  drop(): Promise<void>
}

// PostgreSQL refuses to clone a template while another session is connected
// to it (SQLSTATE 55006), e.g. while a concurrent caller still disconnects
// from it after setup. PostgreSQL itself waits up to 5 s for such sessions
// before failing, so a few more attempts with a short backoff suffice.
const objectInUse = '55006'
const createAttempts = 3
const firstBackoffMs = 100

/**
 * Creates a fresh, uniquely named database on the server and returns its URL.
 *
 * The name is `<prefix>_<pid>_<random hex>` (prefix default `'iddqueue_test'`),
 * so {@link dropStaleTestDatabases} can later drop it if this process dies
 * before `drop()`. With `template`, the database is a copy of it, which is far
 * faster than running migrations per test file. `serverUrl` must point to an
 * existing database on which the user may run `CREATE DATABASE`.
 *
 * @example
 * const db = await createTestDatabase('postgres://root@127.0.0.1:5432/test', {
 *   template: 'iddqueue_template',
 * })
 * try {
 *   const sql = postgres(db.url)
 *   await sql`select 1`
 *   await sql.end()
 * } finally {
 *   await db.drop()
 * }
 */
export async function createTestDatabase(
  serverUrl: string,
  options: CreateTestDatabaseOptions = {},
): Promise<CreatedTestDatabase> {
  parseServerUrl(serverUrl)
  const prefix = options.prefix ?? 'iddqueue_test'
  assertDatabaseName(prefix, 'createTestDatabase option `prefix`')
  if (options.template !== undefined) {
    assertDatabaseName(options.template, 'createTestDatabase option `template`')
  }
  const name = `${prefix}_${process.pid}_${randomBytes(8).toString('hex')}`
  assertDatabaseName(
    name,
    `createTestDatabase database name (from prefix ${JSON.stringify(prefix)})`,
  )

  const sql = connect(serverUrl)
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        if (options.template === undefined) {
          await sql`create database ${sql(name)}`
        } else {
          await sql`create database ${sql(name)} template ${sql(options.template)}`
        }
        break
      } catch (error) {
        const busy = error instanceof postgres.PostgresError && error.code === objectInUse
        if (busy && attempt < createAttempts) {
          await sleep(firstBackoffMs * 2 ** (attempt - 1))
          continue
        }
        const from = options.template === undefined ? '' : ` from template ${options.template}`
        throw new TestDatabaseError(
          `could not create test database ${name}${from}${busy ? ` after ${attempt} attempts` : ''}: ${(error as Error).message}`,
          { cause: error },
        )
      }
    }
  } finally {
    await sql.end()
  }

  return {
    url: databaseUrl(serverUrl, name),
    name,
    drop: () => dropDatabase(serverUrl, name),
  }
}
