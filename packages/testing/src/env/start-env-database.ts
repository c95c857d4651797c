import { connect } from '../internal/connect.js'
import { parseServerUrl, redactUrl } from '../internal/database-url.js'
import type { TestDatabase } from '../test-database.js'
import { TestDatabaseError } from '../test-database-error.js'

/**
 * Uses the server at `url` as is, after checking that it answers; `stop()`
 * does nothing, since the server is not ours.
 *
 * @internal
 */
export async function startEnvDatabase(url: string): Promise<TestDatabase> {
  parseServerUrl(url, 'DATABASE_URL (or the `url` option)')
  const sql = connect(url)
  try {
    await sql`select 1`
  } catch (error) {
    throw new TestDatabaseError(
      `cannot connect to the test server ${redactUrl(url)} (from DATABASE_URL or the \`url\` option): ${(error as Error).message}`,
      { cause: error },
    )
  } finally {
    await sql.end()
  }
  return { url, mode: 'env', stop: async () => {} }
}
