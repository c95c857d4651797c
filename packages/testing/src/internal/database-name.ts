import { TestDatabaseError } from '../test-database-error.js'

// Lowercase, unquoted-safe PostgreSQL identifiers; 63 bytes is NAMEDATALEN - 1.
const databaseNamePattern = /^[a-z_][a-z0-9_]*$/
const maxDatabaseNameLength = 63

/**
 * Throws a {@link TestDatabaseError} unless `name` is a lowercase identifier
 * (`[a-z_][a-z0-9_]*`) of at most 63 characters, which PostgreSQL would
 * neither fold nor truncate.
 *
 * @internal
 */
export function assertDatabaseName(name: string, what: string): void {
  if (!databaseNamePattern.test(name) || name.length > maxDatabaseNameLength) {
    throw new TestDatabaseError(
      `${what} must match /^[a-z_][a-z0-9_]*$/ and be at most ${maxDatabaseNameLength} characters, got ${JSON.stringify(name)}`,
    )
  }
}
