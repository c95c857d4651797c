import { MigrationError } from '../errors.js'
import type { Executor } from '../executor/executor.js'
import { toExecutor } from '../executor/to-executor.js'
import { type Namespace, type NamespaceOptions, toNamespace } from '../namespace/namespace.js'
import { coreMigrations } from './core-migrations.js'
import {
  checksumOf,
  ledgerStatements,
  MIN_POSTGRES_VERSION,
  migrationLockKey,
  readLedger,
} from './ledger.js'
import { pendingMigrations } from './migrate.js'
import { assertMigrationSets, type Migration, type MigrationSet } from './migration.js'

/**
 * Options of {@link generateInitSql} and {@link generateUpgradeSql}.
 *
 * @example
 * const options: GenerateSqlOptions = { namespace: { schema: 'jobs', prefix: 'billing_' } }
 * const text = generateInitSql(options)
 */
export interface GenerateSqlOptions {
  /** Where the tables live. Default: schema `iddqueue`, no prefix. */
  readonly namespace?: Namespace | NamespaceOptions | undefined
  /** The migration sets, in order. Default `[coreMigrations]`. */
  readonly owners?: readonly MigrationSet[] | undefined
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}

function guardedMigration(ns: Namespace, owner: string, migration: Migration): string {
  const statements = migration.up(ns).map((statement) => {
    if (statement.includes('$ddl$'))
      throw new MigrationError(
        `Migration ${owner} #${migration.version} contains $ddl$, which generated SQL uses to quote statements`,
      )
    return `    execute $ddl$${statement}$ddl$;`
  })
  return `-- ${owner} #${migration.version}: ${migration.name}
do $iddqueue$
begin
  if not exists (select from ${ns.table('migrations')} where owner = ${literal(owner)} and version = ${migration.version}) then
${statements.join('\n')}
    insert into ${ns.table('migrations')} (owner, version, name, checksum)
      values (${literal(owner)}, ${migration.version}, ${literal(migration.name)}, ${literal(checksumOf(migration))});
  end if;
end
$iddqueue$;`
}

function script(ns: Namespace, entries: { owner: string; migration: Migration }[]): string {
  return `-- iddqueue schema for namespace ${ns.schema} (prefix ${JSON.stringify(ns.prefix)})
-- Review, then apply with: psql -v ON_ERROR_STOP=1 -f this-file.sql
-- Safe to run more than once: each migration is guarded by the ledger.
begin;
do $iddqueue$
begin
  if current_setting('server_version_num')::int < ${MIN_POSTGRES_VERSION} then
    raise exception 'iddqueue needs PostgreSQL 14 or newer, this server is %', current_setting('server_version');
  end if;
end
$iddqueue$;
select pg_advisory_xact_lock(${migrationLockKey(ns)});
${ledgerStatements(ns).join(';\n')};
${entries.map(({ owner, migration }) => guardedMigration(ns, owner, migration)).join('\n')}
commit;
`
}

/**
 * Returns the whole schema as SQL text, for a DBA to review and apply.
 *
 * The script checks the PostgreSQL version, takes the same advisory lock as
 * {@link migrate}, and records each migration in the ledger, so applying it
 * gives exactly the schema `migrate` would, and applying it twice changes
 * nothing.
 *
 * @example
 * import { writeFileSync } from 'node:fs'
 * writeFileSync('iddqueue.sql', generateInitSql({ namespace: { schema: 'jobs' } }))
 * // psql -v ON_ERROR_STOP=1 -f iddqueue.sql
 */
export function generateInitSql(options: GenerateSqlOptions = {}): string {
  const ns = toNamespace(options.namespace)
  const sets = options.owners ?? [coreMigrations]
  assertMigrationSets(sets)
  return script(
    ns,
    sets.flatMap((set) => set.migrations.map((migration) => ({ owner: set.owner, migration }))),
  )
}

/**
 * Returns only the migrations a database still needs, as SQL text.
 *
 * Reads the namespace's ledger (nothing is written) and produces a script like
 * {@link generateInitSql} limited to the pending migrations; applying it
 * twice changes nothing.
 *
 * @example
 * const text = await generateUpgradeSql(sql, { namespace: { schema: 'jobs' } })
 * console.log(text)
 */
export async function generateUpgradeSql(
  db: unknown,
  options: GenerateSqlOptions = {},
): Promise<string> {
  const executor: Executor = toExecutor(db)
  const ns = toNamespace(options.namespace)
  const sets = options.owners ?? [coreMigrations]
  assertMigrationSets(sets)
  return script(ns, pendingMigrations(sets, await readLedger(executor, ns)))
}
