import { MigrationError } from '../errors.js'
import type { Executor } from '../executor/executor.js'
import { toExecutor } from '../executor/to-executor.js'
import { type Namespace, type NamespaceOptions, toNamespace } from '../namespace/namespace.js'
import { coreMigrations } from './core-migrations.js'
import {
  type AppliedMigration,
  assertPostgresVersion,
  checksumOf,
  ledgerStatements,
  migrationLockKey,
  readLedger,
} from './ledger.js'
import { assertMigrationSets, type Migration, type MigrationSet } from './migration.js'

/**
 * Options of {@link migrate}.
 *
 * @example
 * await migrate(sql, {
 *   namespace: { schema: 'jobs' },
 *   onMigration: ({ owner, version, name }) => console.log(`applying ${owner} #${version} ${name}`),
 * })
 */
export interface MigrateOptions {
  /** Where the tables live. Default: schema `iddqueue`, no prefix. */
  readonly namespace?: Namespace | NamespaceOptions | undefined
  /** The migration sets to apply, in order. Default `[coreMigrations]`. */
  readonly owners?: readonly MigrationSet[] | undefined
  /** Called before each migration runs, for progress output. */
  readonly onMigration?:
    | ((migration: { owner: string; version: number; name: string }) => void)
    | undefined
}

/**
 * What {@link migrate} did.
 *
 * @example
 * const { applied }: MigrateResult = await migrate(sql)
 * console.log(applied.length === 0 ? 'up to date' : `${applied.length} migrations applied`)
 */
export interface MigrateResult {
  /** Migrations applied by this call, in order; empty when already up to date. */
  readonly applied: readonly { owner: string; version: number; name: string }[]
}

/** @internal The migrations of `sets` the ledger does not have, after checking the applied ones. */
export function pendingMigrations(
  sets: readonly MigrationSet[],
  ledger: readonly AppliedMigration[],
): { owner: string; migration: Migration }[] {
  const applied = new Map(ledger.map((row) => [`${row.owner}#${row.version}`, row]))
  const pending: { owner: string; migration: Migration }[] = []
  for (const set of sets) {
    for (const migration of set.migrations) {
      const row = applied.get(`${set.owner}#${migration.version}`)
      if (!row) {
        pending.push({ owner: set.owner, migration })
      } else if (row.checksum !== checksumOf(migration)) {
        throw new MigrationError(
          `Migration ${set.owner} #${migration.version} (${migration.name}) differs from the one applied to this database; migrations are append-only, add a new one instead`,
        )
      }
    }
  }
  return pending
}

/**
 * Applies the migrations that the namespace's ledger does not have yet.
 *
 * Checks that the server is PostgreSQL 14 or newer, then runs everything in
 * one transaction under an advisory lock, so concurrent callers (several
 * workers starting at once) are safe: one applies, the others find nothing
 * to do. Running it again changes nothing. An edited, already-applied
 * migration is refused with a {@link MigrationError}.
 *
 * @example
 * import postgres from 'postgres'
 * const sql = postgres(process.env.DATABASE_URL!)
 * const { applied } = await migrate(sql, { namespace: { schema: 'jobs' } })
 * console.log(`${applied.length} migrations applied`)
 */
export async function migrate(db: unknown, options: MigrateOptions = {}): Promise<MigrateResult> {
  const executor: Executor = toExecutor(db)
  const ns = toNamespace(options.namespace)
  const sets = options.owners ?? [coreMigrations]
  assertMigrationSets(sets)
  await assertPostgresVersion(executor)
  return executor.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1::bigint)', [migrationLockKey(ns).toString()])
    for (const statement of ledgerStatements(ns)) await tx.query(statement)
    const pending = pendingMigrations(sets, await readLedger(tx, ns))
    const applied: { owner: string; version: number; name: string }[] = []
    for (const { owner, migration } of pending) {
      const entry = { owner, version: migration.version, name: migration.name }
      options.onMigration?.(entry)
      for (const statement of migration.up(ns)) await tx.query(statement)
      await tx.query(
        `insert into ${ns.table('migrations')} (owner, version, name, checksum) values ($1, $2, $3, $4)`,
        [owner, migration.version, migration.name, checksumOf(migration)],
      )
      applied.push(entry)
    }
    return { applied }
  })
}
