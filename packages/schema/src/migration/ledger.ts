import { UnsupportedPostgresError } from '../errors.js'
import type { Executor } from '../executor/executor.js'
import { lockKeyOf, sha256Hex } from '../namespace/hash.js'
import { quoteIdentifier } from '../namespace/identifier.js'
import { type Namespace, namespace } from '../namespace/namespace.js'
import type { Migration } from './migration.js'

/**
 * The oldest PostgreSQL iddqueue supports, as `server_version_num`.
 *
 * @example
 * const [row] = await sql`select current_setting('server_version_num')::int as version`
 * if (row!.version < MIN_POSTGRES_VERSION) console.error('iddqueue needs PostgreSQL 14 or newer')
 */
export const MIN_POSTGRES_VERSION = 140000

const CANONICAL = namespace({ schema: 'iddqueue', prefix: '' })

/** @internal A migration's checksum: its statements for the default namespace. */
export function checksumOf(migration: Migration): string {
  return sha256Hex(migration.up(CANONICAL).join(';\n')).slice(0, 32)
}

/**
 * @internal The advisory lock that serializes migrations. It is per schema,
 * not per namespace: two prefixes in one schema both run `create schema`.
 */
export function migrationLockKey(ns: Namespace): bigint {
  return lockKeyOf(`iddqueue:migrate:${ns.schema}`)
}

/** @internal Statements that create the schema and the ledger when missing. */
export function ledgerStatements(ns: Namespace): string[] {
  return [
    `create schema if not exists ${quoteIdentifier(ns.schema)}`,
    `create table if not exists ${ns.table('migrations')} (
  owner text not null,
  version integer not null,
  name text not null,
  checksum text not null,
  applied_at timestamptz not null default now(),
  primary key (owner, version)
)`,
  ]
}

/**
 * Fails with {@link UnsupportedPostgresError} unless the server is
 * PostgreSQL 14 or newer.
 *
 * @example
 * await assertPostgresVersion(toExecutor(sql))
 */
export async function assertPostgresVersion(executor: Executor): Promise<number> {
  const [row] = await executor.query<{ version: number; text: string }>(
    `select current_setting('server_version_num')::int as version, current_setting('server_version') as text`,
  )
  const version = row?.version ?? 0
  if (version < MIN_POSTGRES_VERSION) {
    throw new UnsupportedPostgresError(
      `iddqueue needs PostgreSQL 14 or newer; this server is ${row?.text ?? 'unknown'} (server_version_num ${version})`,
    )
  }
  return version
}

/**
 * One applied migration, as the ledger records it.
 *
 * @example
 * const ledger = await sql<AppliedMigration[]>`select owner, version, name, checksum from iddqueue.migrations`
 */
export interface AppliedMigration {
  readonly owner: string
  readonly version: number
  readonly name: string
  readonly checksum: string
}

/** @internal Reads the ledger; empty when it does not exist yet. */
export async function readLedger(executor: Executor, ns: Namespace): Promise<AppliedMigration[]> {
  const [exists] = await executor.query<{ present: boolean }>(
    'select to_regclass($1) is not null as present',
    [ns.table('migrations')],
  )
  if (!exists?.present) return []
  return executor.query<AppliedMigration>(
    `select owner, version, name, checksum from ${ns.table('migrations')} order by owner, version`,
  )
}
