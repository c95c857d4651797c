import { TestDatabaseError } from '../test-database-error.js'
import { connect } from './connect.js'

/**
 * `DROP DATABASE IF EXISTS <name> WITH (FORCE)` on a fresh maintenance connection.
 *
 * @internal
 */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const sql = connect(serverUrl)
  try {
    await sql`drop database if exists ${sql(name)} with (force)`
  } catch (error) {
    throw new TestDatabaseError(`could not drop database ${name}: ${(error as Error).message}`, {
      cause: error,
    })
  } finally {
    await sql.end()
  }
}
