import type { Migration, MigrationSet } from '@iddqueue/schema'

/**
 * The plugin's migrations, applied by `broker.migrate()` under its name
 * `@iddqueue/results`. Append-only: once released, a migration never
 * changes; add version 2 instead.
 */
export const resultsMigrations: readonly Migration[] = Object.freeze([
  {
    version: 1,
    name: 'create-results',
    up: (ns) => [
      `create table ${ns.table('results')} (
  message_id uuid primary key,
  status text not null
    constraint ${ns.relation('results_status_check')}
    check (status in ('success', 'failure', 'cancelled')),
  value jsonb,
  failure jsonb,
  expires_at timestamptz not null,
  stored_at timestamptz not null default now()
)`,
      // purgeResults: expired rows.
      `create index ${ns.relation('results_expires')} on ${ns.table('results')} (expires_at)`,
    ],
  },
])

/**
 * The plugin's migrations with their owner, as tools that apply migrations
 * without a broker read them: `iddqueue migrate --plugins @iddqueue/results`,
 * or `migrate(sql, { owners: [coreMigrations, migrationSet] })`.
 *
 * @example
 * import { coreMigrations, generateInitSql } from '@iddqueue/schema'
 * import { migrationSet } from '@iddqueue/results'
 *
 * const ddl = generateInitSql({ owners: [coreMigrations, migrationSet] })
 */
export const migrationSet: MigrationSet = Object.freeze({
  owner: '@iddqueue/results',
  migrations: resultsMigrations,
})
