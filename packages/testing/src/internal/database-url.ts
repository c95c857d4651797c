import { TestDatabaseError } from '../test-database-error.js'

/**
 * Parses a PostgreSQL server URL, or throws a {@link TestDatabaseError} that
 * names the (password-redacted) value and what was expected.
 *
 * @internal
 */
export function parseServerUrl(serverUrl: string, what = 'serverUrl'): URL {
  let url: URL
  try {
    url = new URL(serverUrl)
  } catch (error) {
    throw new TestDatabaseError(
      `${what} must be a postgres:// URL, got ${JSON.stringify(redactUrl(serverUrl))}`,
      { cause: error },
    )
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new TestDatabaseError(
      `${what} must start with postgres:// or postgresql://, got ${JSON.stringify(redactUrl(serverUrl))}`,
    )
  }
  return url
}

/**
 * The same server URL with its database path replaced by `database`; the
 * credentials, host, port and query parameters are kept.
 *
 * @example
 * databaseUrl('postgres://root@127.0.0.1:5432/test?sslmode=disable', 'clone')
 * // 'postgres://root@127.0.0.1:5432/clone?sslmode=disable'
 *
 * @internal
 */
export function databaseUrl(serverUrl: string, database: string): string {
  const url = parseServerUrl(serverUrl)
  url.pathname = `/${encodeURIComponent(database)}`
  return url.toString()
}

/**
 * The URL with its password replaced by `***`, for messages and logs. Strings
 * that are not URLs are returned as they are.
 *
 * @internal
 */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value)
    if (url.password !== '') url.password = '***'
    return url.toString()
  } catch {
    return value
  }
}
