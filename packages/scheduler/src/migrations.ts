import type { Migration, MigrationSet } from '@iddqueue/schema'

/**
 * The plugin's migrations, applied by `broker.migrate()` under its name
 * `@iddqueue/scheduler`. Append-only: once released, a migration never
 * changes; add version 2 instead.
 *
 * @example
 * import { schedulerMigrations } from '@iddqueue/scheduler'
 * console.log(schedulerMigrations.map((m) => m.name)) // ['create-schedules']
 */
export const schedulerMigrations: readonly Migration[] = Object.freeze([
  {
    version: 1,
    name: 'create-schedules',
    up: (ns) => [
      `create table ${ns.table('schedules')} (
  name text primary key,
  actor text not null,
  queue text not null,
  args jsonb not null,
  priority integer not null,
  every_ms bigint
    constraint ${ns.relation('schedules_every_ms_check')} check (every_ms > 0),
  cron text,
  timezone text,
  start_at timestamptz,
  end_at timestamptz,
  anchor_at timestamptz not null,
  catch_up jsonb not null,
  overlap text not null
    constraint ${ns.relation('schedules_overlap_check')} check (overlap in ('allow', 'skip')),
  enabled boolean not null default true,
  next_run_at timestamptz,
  last_run_at timestamptz,
  last_message_id uuid,
  source text not null
    constraint ${ns.relation('schedules_source_check')} check (source in ('code', 'api')),
  definition_hash text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint ${ns.relation('schedules_timing_check')} check ((every_ms is null) <> (cron is null)),
  constraint ${ns.relation('schedules_window_check')} check (end_at is null or start_at is null or end_at > start_at)
)`,
      // The tick's due query (enabled, next_run_at <= now, in order) and the
      // loop's sleep (min(next_run_at) of enabled schedules).
      `create index ${ns.relation('schedules_due')} on ${ns.table('schedules')} (next_run_at) where enabled`,
    ],
  },
])

/**
 * The plugin's migrations with their owner, as tools that apply migrations
 * without a broker read them: `iddqueue migrate --plugins @iddqueue/scheduler`,
 * or `migrate(sql, { owners: [coreMigrations, migrationSet] })`.
 *
 * @example
 * import { coreMigrations, generateInitSql } from '@iddqueue/schema'
 * import { migrationSet } from '@iddqueue/scheduler'
 *
 * const ddl = generateInitSql({ owners: [coreMigrations, migrationSet] })
 */
export const migrationSet: MigrationSet = Object.freeze({
  owner: '@iddqueue/scheduler',
  migrations: schedulerMigrations,
})
