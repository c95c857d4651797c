import { describeValue } from '../describe-value.js'
import { InvalidIdentifierError, InvalidOptionError } from '../errors.js'
import { quoteIdentifier } from '../namespace/identifier.js'
import { type Namespace, type NamespaceOptions, toNamespace } from '../namespace/namespace.js'
import type { TableName } from '../tables/iddqueue-database.js'

/**
 * What a role may do with a namespace's tables:
 *
 * - `'producer'`: send messages (with deduplication keys) and read results
 *   and message states. It may not read any message's arguments or options,
 *   change or delete a message, register a worker, or run migrations.
 * - `'worker'`: what a worker process needs: claim, settle, heartbeat,
 *   crash recovery, purge, and the plugins' tables. No DDL.
 * - `'admin'`: operations (pause, cancel, retry, purge, inspect payloads)
 *   on every table, including the migrations ledger. Still no DDL: run
 *   migrations as the schema's owner.
 *
 * @example
 * const mode: GrantMode = 'producer'
 */
export type GrantMode = 'producer' | 'worker' | 'admin'

/**
 * Options of {@link generateGrantsSql}.
 *
 * @example
 * const options: GenerateGrantsOptions = { role: 'app_producer', mode: 'producer' }
 */
export interface GenerateGrantsOptions {
  /** An existing role, quoted as given (`"App"` stays `App`). */
  readonly role: string
  readonly mode: GrantMode
  /** Where the tables live. Default: schema `iddqueue`, no prefix. */
  readonly namespace?: Namespace | NamespaceOptions
}

type Privileges = Partial<Record<TableName | CoordinationTableName, string>>

/**
 * The coordination plugin's tables (its migrations create them; the logical
 * `coordination` table of `IddqueueDatabase` is not one of them).
 */
const COORDINATION_TABLES = [
  'coordination_locks',
  'coordination_slots',
  'coordination_buckets',
  'coordination_hits',
  'coordination_barriers',
  'coordination_groups',
  'coordination_group_members',
  'coordination_limits',
  'coordination_rates',
] as const

type CoordinationTableName = (typeof COORDINATION_TABLES)[number]

/** The same privileges on every coordination table. */
function onCoordination(privileges: string): Privileges {
  return Object.fromEntries(COORDINATION_TABLES.map((name) => [name, privileges]))
}

// Columns a producer may read in the messages table: states and metadata,
// never args, options or the failure text (which may quote them).
const PRODUCER_MESSAGE_COLUMNS = [
  'id',
  'queue',
  'actor',
  'state',
  'priority',
  'eta',
  'retries',
  'attempts',
  'enqueued_at',
  'updated_at',
  'cancel_requested',
]

const DML = 'select, insert, update, delete'

function privilegesFor(mode: GrantMode): Privileges {
  switch (mode) {
    case 'producer':
      return {
        messages: `insert, select (${PRODUCER_MESSAGE_COLUMNS.join(', ')})`,
        // A duplicate send returns the original message, which this table holds.
        deduplication: 'select, insert, update',
        results: 'select',
        queue_control: 'select',
        // A group of messages (coordination) is recorded when it is sent.
        coordination_groups: 'select, insert',
        coordination_group_members: 'select',
        migrations: 'select',
      }
    case 'worker':
      return {
        messages: DML,
        deduplication: DML,
        queue_control: DML,
        workers: DML,
        attempts: DML,
        results: DML,
        ...onCoordination(DML),
        schedules: DML,
        migrations: 'select',
      }
    case 'admin':
      return {
        messages: `${DML}, truncate`,
        deduplication: `${DML}, truncate`,
        queue_control: `${DML}, truncate`,
        workers: `${DML}, truncate`,
        attempts: `${DML}, truncate`,
        results: `${DML}, truncate`,
        ...onCoordination(`${DML}, truncate`),
        schedules: `${DML}, truncate`,
        migrations: 'select',
      }
  }
}

const MAX_ROLE_BYTES = 63

function assertRole(role: unknown): asserts role is string {
  if (
    typeof role !== 'string' ||
    role.length === 0 ||
    Buffer.byteLength(role) > MAX_ROLE_BYTES ||
    role.includes('\u0000') ||
    // The statements are run from a dollar-quoted block with this tag.
    role.includes('$iddqueue$') ||
    !role.isWellFormed()
  ) {
    throw new InvalidIdentifierError(
      `Invalid role ${describeValue(role)}: expected a role name of 1 to ${MAX_ROLE_BYTES} bytes without \\u0000`,
    )
  }
}

/**
 * SQL that grants `role` what `mode` needs on a namespace's tables and
 * nothing more (see {@link GrantMode}). Tables a plugin has not created yet
 * are skipped; run it again after adding a plugin. The role must exist and
 * the SQL must run as the tables' owner. Idempotent; no transaction of its
 * own (postgres.js refuses `begin` in `sql.unsafe` on a pool), so wrap it in
 * one if you apply it with other changes.
 *
 * Every role also needs `CONNECT` on the database, which this does not grant.
 *
 * @example
 * await sql.unsafe(generateGrantsSql({ role: 'checkout', mode: 'producer' }))
 * await sql.unsafe(generateGrantsSql({ role: 'jobs_worker', mode: 'worker', namespace: { schema: 'jobs' } }))
 */
export function generateGrantsSql(options: GenerateGrantsOptions): string {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('Invalid grants options: expected { role, mode }')
  }
  assertRole(options.role)
  if (!['producer', 'worker', 'admin'].includes(options.mode as string)) {
    throw new InvalidOptionError(
      `Invalid grants mode ${describeValue(options.mode)}: expected 'producer', 'worker' or 'admin'`,
    )
  }
  const ns = toNamespace(options.namespace)
  const role = quoteIdentifier(options.role)
  const schema = quoteIdentifier(ns.schema)
  const lines = [
    `-- iddqueue: ${options.mode} privileges for role ${JSON.stringify(options.role)} on namespace ${JSON.stringify(ns.schema)} (prefix ${JSON.stringify(ns.prefix)})`,
    `grant usage on schema ${schema} to ${role};`,
  ]
  for (const [table, privileges] of Object.entries(privilegesFor(options.mode))) {
    const qualified = `${quoteIdentifier(ns.schema)}.${ns.relation(table)}`
    // A plugin's table may not exist yet; the grant is a literal, so no
    // value reaches it from outside except the quoted identifiers.
    const grant = `grant ${privileges} on ${qualified} to ${role}`
    lines.push(
      `do $iddqueue$ begin if to_regclass('${qualified.replaceAll("'", "''")}') is not null then execute '${grant.replaceAll("'", "''")}'; end if; end $iddqueue$;`,
    )
  }
  return `${lines.join('\n')}\n`
}
