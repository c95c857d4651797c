import { describeValue } from '../describe-value.js'
import { InvalidIdentifierError } from '../errors.js'
import type { TableName } from '../tables/iddqueue-database.js'
import { lockKeyOf, sha256Hex } from './hash.js'
import { assertPrefix, assertSchemaName, quoteIdentifier } from './identifier.js'

/**
 * Where iddqueue keeps its tables: a PostgreSQL schema and a table prefix.
 *
 * @example
 * const options: NamespaceOptions = { schema: 'jobs', prefix: 'billing_' }
 * const ns = namespace(options)
 */
export interface NamespaceOptions {
  /** The PostgreSQL schema. Default `'iddqueue'`. */
  readonly schema?: string | undefined
  /** Prepended to every table name. Default `''`. */
  readonly prefix?: string | undefined
}

/**
 * A validated (schema, prefix) pair and every name derived from it: quoted
 * tables, NOTIFY channels and advisory-lock keys. Two namespaces in one
 * database never share a table, a channel or a lock key.
 *
 * @example
 * const ns: Namespace = namespace({ schema: 'jobs' })
 * ns.table('messages') // '"jobs"."messages"'
 * ns.lockKey('purge') // a bigint, unique to this namespace and purpose
 */
export interface Namespace {
  readonly schema: string
  readonly prefix: string
  /** `schema:prefix`, a stable key for this namespace. */
  readonly key: string
  /** The quoted, schema-qualified table: `"iddqueue"."messages"`. */
  table(name: TableName): string
  /** The unqualified table name with its prefix: `messages`. */
  tableName(name: TableName): string
  /** A quoted identifier for an index or constraint: `"messages_ready"`. */
  relation(suffix: string): string
  /** A NOTIFY channel name for `purpose`, at most 63 bytes. */
  channel(purpose: string): string
  /** A signed 64-bit advisory-lock key for `purpose`, unique to this namespace. */
  lockKey(purpose: string): bigint
}

/**
 * Longest channel name PostgreSQL accepts (NAMEDATALEN - 1).
 *
 * @example
 * Buffer.byteLength(namespace({ schema: 's'.repeat(63) }).channel('control')) <= MAX_CHANNEL_BYTES // true
 */
export const MAX_CHANNEL_BYTES = 63

/**
 * Validates a schema and prefix and derives every name iddqueue uses in them.
 *
 * Both are refused, with an {@link InvalidIdentifierError} that names the
 * value, unless they are lowercase ASCII identifiers (schema up to 63 bytes,
 * not `pg_*`; prefix up to 32 bytes, may be empty). Nothing reaches the
 * database before this check.
 *
 * @example
 * const ns = namespace({ schema: 'jobs', prefix: 'billing_' })
 * ns.table('messages')  // '"jobs"."billing_messages"'
 * ns.channel('wake')    // 'iddqueue:jobs:billing_:wake'
 */
export function namespace(options: NamespaceOptions = {}): Namespace {
  const schema = options.schema ?? 'iddqueue'
  const prefix = options.prefix ?? ''
  assertSchemaName(schema)
  assertPrefix(prefix)
  const key = `${schema}:${prefix}`
  const quotedSchema = quoteIdentifier(schema)
  return Object.freeze({
    schema,
    prefix,
    key,
    table: (name: TableName) => `${quotedSchema}.${quoteIdentifier(prefix + name)}`,
    tableName: (name: TableName) => prefix + name,
    relation: (suffix: string) => quoteIdentifier(prefix + suffix),
    channel: (purpose: string) => channelName(key, purpose),
    lockKey: (purpose: string) => lockKeyOf(`iddqueue:${key}:${purpose}`),
  })
}

/**
 * `iddqueue:<schema>:<prefix>:<purpose>`, or a stable hash of it when that
 * would pass 63 bytes. The `:` separators cannot occur in a schema or prefix,
 * so two namespaces never produce the same name.
 */
function channelName(key: string, purpose: string): string {
  const full = `iddqueue:${key}:${purpose}`
  if (Buffer.byteLength(full, 'utf8') <= MAX_CHANNEL_BYTES) return full
  return `iddqueue:${sha256Hex(full).slice(0, 40)}`
}

/**
 * True when `value` is a namespace made by {@link namespace}.
 *
 * @example
 * isNamespace(namespace()) // true
 * isNamespace({ schema: 'jobs' }) // false: options, not a namespace
 */
export function isNamespace(value: unknown): value is Namespace {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Namespace).table === 'function' &&
    typeof (value as Namespace).key === 'string'
  )
}

/**
 * Accepts a namespace or its options and returns a validated namespace.
 *
 * @example
 * const ns = toNamespace(options.namespace) // undefined gives the default namespace
 */
export function toNamespace(value: Namespace | NamespaceOptions | undefined): Namespace {
  if (value !== undefined && (typeof value !== 'object' || value === null)) {
    throw new InvalidIdentifierError(
      `Invalid namespace ${describeValue(value)}: expected a namespace() or { schema, prefix }`,
    )
  }
  return isNamespace(value) ? value : namespace(value)
}
