import { describeValue } from '../describe-value.js'
import { InvalidIdentifierError } from '../errors.js'

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/
const PREFIX = /^([a-z_][a-z0-9_]*)?$/

/**
 * Longest schema name: PostgreSQL truncates identifiers past 63 bytes.
 *
 * @example
 * namespace({ schema: 's'.repeat(MAX_SCHEMA_BYTES) }) // the longest schema name accepted
 */
export const MAX_SCHEMA_BYTES = 63
/**
 * Longest table prefix, so that every table and index name stays within 63 bytes.
 *
 * @example
 * namespace({ prefix: 'p'.repeat(MAX_PREFIX_BYTES) }) // the longest prefix accepted
 */
export const MAX_PREFIX_BYTES = 32

/**
 * @internal Checks a schema name: lowercase ASCII letters, digits and `_`,
 * not starting with a digit, not `pg_*`, at most 63 bytes.
 */
export function assertSchemaName(value: unknown): asserts value is string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value) || value.length > MAX_SCHEMA_BYTES) {
    throw new InvalidIdentifierError(
      `Invalid schema name ${describeValue(value)}: expected 1 to ${MAX_SCHEMA_BYTES} lowercase ASCII letters, digits or underscores, not starting with a digit`,
    )
  }
  if (value.startsWith('pg_')) {
    throw new InvalidIdentifierError(
      `Invalid schema name ${describeValue(value)}: names starting with "pg_" are reserved by PostgreSQL`,
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
      `Invalid table prefix ${describeValue(value)}: expected at most ${MAX_PREFIX_BYTES} lowercase ASCII letters, digits or underscores, not starting with a digit`,
    )
  }
}

/**
 * Quotes a validated identifier for SQL text.
 *
 * @example
 * const ns = namespace({ schema: 'jobs', prefix: 'billing_' })
 * const table = `${quoteIdentifier(ns.schema)}.${ns.relation('audit_log')}` // "jobs"."billing_audit_log"
 */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}
