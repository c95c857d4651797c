import { connect } from './internal/connect.js'
import { assertDatabaseName } from './internal/database-name.js'
import { parseServerUrl } from './internal/database-url.js'
import { dropDatabase } from './internal/drop-database.js'
import { isProcessAlive } from './internal/process-alive.js'
import { TestDatabaseError } from './test-database-error.js'

/**
 * Drops the test databases left behind by processes that died before they
 * could drop them, and returns how many it dropped.
 *
 * It considers the databases named `<prefix>_<pid>_<hex>` (the names
 * {@link createTestDatabase} makes) and drops those whose `pid` is not a live
 * process on this host. It assumes the server is used from this host only: a
 * test process on another machine sharing the server would look dead here.
 * Default prefix `'iddqueue_test'`.
 *
 * @example
 * const dropped = await dropStaleTestDatabases('postgres://root@127.0.0.1:5432/test')
 * if (dropped > 0) console.log(`dropped ${dropped} leftover test databases`)
 */
export async function dropStaleTestDatabases(
  serverUrl: string,
  prefix = 'iddqueue_test',
): Promise<number> {
  parseServerUrl(serverUrl)
  assertDatabaseName(prefix, 'dropStaleTestDatabases argument `prefix`')
  const pattern = new RegExp(`^${prefix}_(\\d+)_[0-9a-f]+$`)

  const sql = connect(serverUrl)
  let names: string[]
  try {
    // starts_with, not LIKE, whose `_` is a wildcard; the pattern below then
    // keeps only the exact shape createTestDatabase makes.
    const rows = await sql<{ datname: string }[]>`
      select datname from pg_database where starts_with(datname, ${`${prefix}_`})`
    names = rows.map((row) => row.datname)
  } catch (error) {
    throw new TestDatabaseError(
      `could not list test databases with prefix ${prefix}: ${(error as Error).message}`,
      { cause: error },
    )
  } finally {
    await sql.end()
  }

  let dropped = 0
  for (const name of names) {
    const pid = Number(pattern.exec(name)?.[1])
    if (!Number.isSafeInteger(pid) || pid <= 0 || isProcessAlive(pid)) continue
    await dropDatabase(serverUrl, name)
    dropped++
  }
  return dropped
}
