import type { Migration, MigrationSet } from '@iddqueue/schema'
import { type Namespace, quoteIdentifier } from '@iddqueue/schema'
import { runningFunctionSql, runningFunctionText } from './sql/running-sql.js'
import { takeRatesFunctionSql } from './sql/take-rates-sql.js'
import { table } from './tables.js'

/**
 * The plugin's migrations, applied by `broker.migrate()` under its name
 * `@iddqueue/coordination`. Append-only: once released, a migration never
 * changes; add the next version instead.
 *
 * @example
 * for (const m of coordinationMigrations) console.log(m.version, m.name) // 1 create-limiters-barriers-groups, 2 create-limits, 3 create-running-slots, 4 create-rate-windows, 5 counter-fillfactor, 6 running-from-messages, 7 lean-limited-claims, 8 running-array, 9 running-single-limit
 */
export const coordinationMigrations: readonly Migration[] = Object.freeze([
  {
    version: 1,
    name: 'create-limiters-barriers-groups',
    up: (ns) => [
      // One row per limiter key, locked while a concurrent or window limiter
      // counts and takes: the count runs after the lock, so it sees every
      // committed holder.
      `create table ${table(ns, 'coordination_locks')} (
  kind text not null,
  key text not null,
  primary key (kind, key)
)`,
      `create table ${table(ns, 'coordination_slots')} (
  key text not null,
  holder uuid not null,
  acquired_at timestamptz not null,
  expires_at timestamptz not null,
  primary key (key, holder)
)`,
      // purge(): expired slots.
      `create index ${ns.relation('coordination_slots_expires')} on ${table(ns, 'coordination_slots')} (expires_at)`,
      `create table ${table(ns, 'coordination_buckets')} (
  key text not null,
  bucket bigint not null,
  count integer not null,
  expires_at timestamptz not null,
  primary key (key, bucket)
)`,
      // purge(): expired buckets.
      `create index ${ns.relation('coordination_buckets_expires')} on ${table(ns, 'coordination_buckets')} (expires_at)`,
      `create table ${table(ns, 'coordination_hits')} (
  key text not null,
  id uuid not null,
  acquired_at timestamptz not null,
  expires_at timestamptz not null,
  primary key (key, id)
)`,
      // Window limiter: the live hits of a key; purge(): expired hits.
      `create index ${ns.relation('coordination_hits_key_expires')} on ${table(ns, 'coordination_hits')} (key, expires_at)`,
      `create index ${ns.relation('coordination_hits_expires')} on ${table(ns, 'coordination_hits')} (expires_at)`,
      `create table ${table(ns, 'coordination_barriers')} (
  key text primary key,
  parties integer not null,
  arrived integer not null default 0,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
)`,
      // purge(): expired barriers.
      `create index ${ns.relation('coordination_barriers_expires')} on ${table(ns, 'coordination_barriers')} (expires_at)`,
      `create table ${table(ns, 'coordination_groups')} (
  id uuid primary key,
  total integer not null,
  done integer not null default 0,
  on_completion jsonb,
  on_failure jsonb,
  completed_at timestamptz,
  failed_at timestamptz,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
)`,
      // purge(): expired groups (their members go with them).
      `create index ${ns.relation('coordination_groups_expires')} on ${table(ns, 'coordination_groups')} (expires_at)`,
      // One row per member that succeeded, written in the settle transaction
      // that acknowledges it: a redelivered member finds its row and counts once.
      `create table ${table(ns, 'coordination_group_members')} (
  group_id uuid not null references ${table(ns, 'coordination_groups')} (id) on delete cascade,
  message_id uuid not null,
  primary key (group_id, message_id)
)`,
    ],
  },
  {
    version: 2,
    name: 'create-limits',
    up: (ns) => [
      // Limits set at runtime (setLimit), read by listLimits and, later, by
      // the claim; a RateLimited throw with a key holds it until held_until.
      `create table ${table(ns, 'coordination_limits')} (
  scope text not null
    constraint ${ns.relation('coordination_limits_scope_check')}
    check (scope in ('queue', 'actor', 'key')),
  name text not null,
  concurrency integer,
  rate_limit integer,
  rate_period_ms bigint,
  held_until timestamptz,
  updated_at timestamptz not null default now(),
  primary key (scope, name)
)`,
    ],
  },
  {
    version: 3,
    name: 'create-running-slots',
    up: (ns) => [
      // One counter per concurrency slot (an actor's, or a key's): the claim
      // increments it with a guard, the settle decrements it, both in the
      // transaction that changes the messages; rebuilt from consumed rows
      // when they disagree (decision 0012).
      `create table ${table(ns, 'coordination_running')} (
  scope text not null,
  name text not null,
  running integer not null default 0,
  cap integer not null,
  granted integer not null default 0,
  updated_at timestamptz not null default now(),
  primary key (scope, name)
)`,
    ],
  },
  {
    version: 4,
    name: 'create-rate-windows',
    up: (ns) => [
      // One row per claim-enforced rate limit (decision 0014): the start
      // times of its newest messages, at most `cap` of them inside the
      // period; the claim reserves a batch's places with a guarded upsert.
      `create table ${table(ns, 'coordination_rates')} (
  scope text not null,
  name text not null,
  starts timestamptz[] not null default '{}',
  cap integer not null,
  period_ms bigint not null,
  granted integer not null default 0,
  updated_at timestamptz not null default now(),
  primary key (scope, name)
)`,
    ],
  },
  {
    version: 5,
    name: 'counter-fillfactor',
    up: (ns) => [
      // Every claim and settle rewrites its limits' rows: room on their pages
      // keeps those updates HOT (no new index entry, dead versions pruned in
      // place). On full pages a keyed claim's upserts cost 4x more, measured.
      `alter table ${table(ns, 'coordination_running')} set (fillfactor = 20)`,
      `alter table ${table(ns, 'coordination_rates')} set (fillfactor = 50)`,
    ],
  },
  {
    version: 6,
    name: 'running-from-messages',
    up: (ns) => [
      // A concurrency limit's running messages are counted from the
      // `consumed` rows themselves, under a per-limit advisory lock
      // (decision 0018): the counters of version 3 go, and with them
      // their writes in every claim and settle and their rebuilds.
      runningFunctionV6Sql(ns),
      `drop table ${table(ns, 'coordination_running')}`,
    ],
  },
  {
    version: 7,
    name: 'lean-limited-claims',
    // The count in PL/pgSQL, planned once per connection, reading each
    // `consumed` row once; the rate reservation as a function the claim
    // calls only when it needs it (decision 0019).
    up: (ns) => [runningFunctionV7Sql(ns), takeRatesFunctionSql(ns)],
  },
  {
    version: 8,
    name: 'running-array',
    // The count as a function returning an array, which reads a row's own
    // limit with two arrow operators where it can (decision 0020). The
    // function of versions 6 and 7 stays for workers of earlier versions
    // during a rolling upgrade: both take the same locks.
    up: (ns) => [runningFunctionV8Sql(ns)],
  },
  {
    version: 9,
    name: 'running-single-limit',
    // The same count, reading a message of one limit with arrow operators
    // only, and the locks without a distinct step (decision 0021).
    up: (ns) => [runningFunctionSql(ns)],
  },
])

/** The counting function of migrations 6 and 7, qualified. */
function runningCountsFunction(ns: Namespace): string {
  return `${quoteIdentifier(ns.schema)}.${ns.relation('coordination_running_counts')}`
}

/** Migration 8's counting function, as released (migration 9 replaces its text). */
function runningFunctionV8Sql(ns: Namespace): string {
  const scan = (limit: string) => `select ${limit} as id
          from ${ns.table('messages')} m
         where m.state = 'consumed'`
  const own =
    scan(`case when left(m.options->'limits'->0->>'id', 3) in ('ck:', 'ca:') then m.options->'limits'->0->>'id'
           else jsonb_path_query_first(m.options, '$.limits[*] ? (@.id starts with "ck:" || @.id starts with "ca:")')->>'id' end`)
  const queue = scan(
    `jsonb_path_query_first(m.options, '$.limits[*] ? (@.id starts with "cq:")')->>'id'`,
  )
  const count = (withQueue: boolean) => `array(select g.n from (
      select min(x.at) as at, (count(*) filter (where x.at is null))::int as n from (
        select i.id, i.at from unnest(ids) with ordinality as i(id, at)
        union all
        select r.id, null from (${withQueue ? `${own}\n        union all\n        ${queue}` : own}) r) x
       group by x.id) g
     where g.at is not null order by g.at)`
  return runningFunctionText(ns, { replace: false, distinctKeys: true, count })
}

/** Migration 7's counting function, as released (migration 8 adds its successor). */
function runningFunctionV7Sql(ns: Namespace): string {
  const salt = `iddqueue:${ns.key}:limit:`.replaceAll("'", "''")
  const scan = (path: string, queue: boolean) =>
    `select jsonb_path_query_first(m.options, '${path}') as v, m.started_at
          from ${ns.table('messages')} m
         where m.state = 'consumed' and exists (select from unnest(ids) as a(id) where left(a.id, 3) ${queue ? '=' : '<>'} 'cq:')`
  return `create or replace function ${runningCountsFunction(ns)}(ids text[]) returns table (id text, running int)
language plpgsql volatile as $$
#variable_conflict use_column
begin
  perform pg_advisory_xact_lock(k.key) from (
    select distinct hashtextextended('${salt}' || i, 0) as key from unnest(ids) as i order by 1) k;
  return query select i.id, coalesce(c.n, 0) from unnest(ids) as i(id) left join (
    select r.v->>'id' as id, count(*)::int as n from (${scan('$.limits[*] ? (@.id starts with "ck:" || @.id starts with "ca:")', false)}
        union all
        ${scan('$.limits[*] ? (@.id starts with "cq:")', true)}) r
     group by 1) c on c.id = i.id;
end
$$`
}

/** Migration 6's counting function, as released (migration 7 replaces it). */
function runningFunctionV6Sql(ns: Namespace): string {
  const salt = `iddqueue:${ns.key}:limit:`.replaceAll("'", "''")
  const places = [
    `$.limits[*] ? (@.id starts with "ck:" || @.id starts with "ca:")`,
    `$.limits[*] ? (@.id starts with "cq:")`,
  ].map((path) => `(jsonb_path_query_first(m.options, '${path}'))`)
  return `create function ${runningCountsFunction(ns)}(ids text[]) returns table (id text, running int)
language sql volatile as $$
  select count(pg_advisory_xact_lock(k.key)) from (
    select distinct hashtextextended('${salt}' || i, 0) as key from unnest(ids) i order by 1) k;
  select i.id, coalesce(c.n, 0) from unnest(ids) i(id) left join (
    select r.v->>'id' as id, count(*)::int as n from (select x.v, m.started_at from ${ns.table('messages')} m
      cross join lateral (values ${places.join(', ')}) x(v)
     where m.state = 'consumed' and x.v is not null) r group by 1) c on c.id = i.id;
$$`
}

/**
 * The plugin's migrations with their owner, as tools that apply migrations
 * without a broker read them: `iddqueue migrate --plugins @iddqueue/coordination`,
 * or `migrate(sql, { owners: [coreMigrations, migrationSet] })`.
 *
 * @example
 * import { coreMigrations, generateInitSql } from '@iddqueue/schema'
 * import { migrationSet } from '@iddqueue/coordination'
 *
 * const ddl = generateInitSql({ owners: [coreMigrations, migrationSet] })
 */
export const migrationSet: MigrationSet = Object.freeze({
  owner: '@iddqueue/coordination',
  migrations: coordinationMigrations,
})
