import { MigrationError } from '../errors.js'
import type { Namespace } from '../namespace/namespace.js'

/**
 * One append-only schema change, as code. `up` returns the statements for a
 * namespace; once released, a migration never changes (the ledger stores a
 * checksum and {@link migrate} refuses an edited one).
 *
 * @example
 * const addPriority: Migration = {
 *   version: 2,
 *   name: 'results-index',
 *   up: (ns) => [`create index ${ns.relation('results_expires')} on ${ns.table('results')} (expires_at)`],
 * }
 */
export interface Migration {
  /** 1, 2, 3, ...: consecutive within its owner. */
  readonly version: number
  /** A short kebab-case description. */
  readonly name: string
  /** The DDL statements, in order, for the given namespace. */
  up(ns: Namespace): readonly string[]
}

/**
 * The migrations of one owner (`@iddqueue/core`, or a plugin package). Each
 * owner has its own version sequence in the ledger.
 *
 * @example
 * const results: MigrationSet = { owner: '@iddqueue/results', migrations: [createResults] }
 * await migrate(db, { namespace: ns, owners: [coreMigrations, results] })
 */
export interface MigrationSet {
  readonly owner: string
  readonly migrations: readonly Migration[]
}

const OWNER = /^[@a-z0-9][a-z0-9@/._-]*$/

/** @internal Checks that versions start at 1 and have no gap, and that owners are unique. */
export function assertMigrationSets(sets: readonly MigrationSet[]): void {
  const owners = new Set<string>()
  for (const set of sets) {
    if (!OWNER.test(set.owner)) {
      throw new MigrationError(
        `Invalid migration owner ${JSON.stringify(set.owner)}: expected a package name`,
      )
    }
    if (owners.has(set.owner)) {
      throw new MigrationError(`Migration owner ${set.owner} is listed twice`)
    }
    owners.add(set.owner)
    set.migrations.forEach((migration, index) => {
      if (migration.version !== index + 1) {
        throw new MigrationError(
          `Migration ${set.owner} #${index + 1} has version ${migration.version}: versions must be 1, 2, 3, ... in order`,
        )
      }
    })
  }
}
