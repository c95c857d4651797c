import { InvalidIdentifierError } from '../errors.js'

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/
const PREFIX = /^([a-z_][a-z0-9_]*)?$/

/** Longest schema name: PostgreSQL truncates identifiers past 63 bytes. */
export const MAX_SCHEMA_BYTES = 63
/** Longest table prefix, so that every table and index name stays within 63 bytes. */
export const MAX_PREFIX_BYTES = 32

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value)
}

/**
 * @internal Checks a schema name: lowercase ASCII letters, digits and `_`,
 * not starting with a digit, not `pg_*`, at most 63 bytes.
 */
export function assertSchemaName(value: unknown): asserts value is string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value) || value.length > MAX_SCHEMA_BYTES) {
    throw new InvalidIdentifierError(
      `Invalid schema name ${describe(value)}: expected 1 to ${MAX_SCHEMA_BYTES} lowercase ASCII letters, digits or underscores, not starting with a digit`,
    )
  }
  if (value.startsWith('pg_')) {
    throw new InvalidIdentifierError(
      `Invalid schema name ${describe(value)}: names starting with "pg_" are reserved by PostgreSQL`,
    )
  }
}

/**
 * @internal Checks a table prefix: empty, or lowercase ASCII letters, digits and
 * `_` not starting with a digit, at most 32 bytes.
 */
export function assertPrefix(value: unknown): asserts value is string {
  if (typeof value !== 'string' || !PREFIX.test(value) || value.length > MAX_PREFIX_BYTES) {
    throw new InvalidIdentifierError(
      `Invalid table prefix ${describe(value)}: expected at most ${MAX_PREFIX_BYTES} lowercase ASCII letters, digits or underscores, not starting with a digit`,
    )
  }
}

/** Quotes a validated identifier for SQL text. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}
