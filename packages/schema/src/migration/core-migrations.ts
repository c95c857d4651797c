import { quoteIdentifier } from '../namespace/identifier.js'
import type { Namespace } from '../namespace/namespace.js'
import type { MigrationSet } from './migration.js'

function createCoreTables(ns: Namespace): string[] {
  const messages = ns.table('messages')
  return [
    `create table ${messages} (
  id uuid primary key,
  queue text not null,
  actor text not null,
  state text not null default 'queued'
    constraint ${ns.relation('messages_state_check')}
    check (state in ('queued', 'consumed', 'done', 'rejected', 'cancelled')),
  priority integer not null default 0,
  eta timestamptz not null default now(),
  args jsonb not null default '[]',
  options jsonb not null default '{}',
  retries integer not null default 0,
  attempts integer not null default 0,
  enqueued_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  worker_id uuid,
  started_at timestamptz,
  cancel_requested boolean not null default false,
  failure jsonb
) with (fillfactor = 90)`,
    // The claim: ready rows only, in claim order, so retained finished rows never slow it.
    `create index ${ns.relation('messages_ready')} on ${messages} (queue, priority, eta, id) where state = 'queued'`,
    // Crash recovery and graceful stop: the messages a worker holds.
    `create index ${ns.relation('messages_consumed')} on ${messages} (worker_id) where state = 'consumed'`,
    // listFailed: rejected messages by queue in UUID (cursor) order.
    `create index ${ns.relation('messages_rejected')} on ${messages} (queue, id) where state = 'rejected'`,
    `create table ${ns.table('deduplication')} (
  queue text not null,
  key text not null,
  message_id uuid not null,
  message jsonb not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  primary key (queue, key)
)`,
    // purge: expired keys.
    `create index ${ns.relation('deduplication_expires')} on ${ns.table('deduplication')} (expires_at)`,
    `create table ${ns.table('queue_control')} (
  queue text primary key,
  paused boolean not null default false,
  updated_at timestamptz not null default now()
)`,
    `create table ${ns.table('workers')} (
  id uuid primary key,
  host text not null,
  pid integer not null,
  queues text[] not null,
  concurrency integer not null,
  started_at timestamptz not null default now(),
  heartbeat_at timestamptz not null default now()
)`,
    `create table ${ns.table('attempts')} (
  id uuid primary key,
  message_id uuid not null,
  actor text not null,
  queue text not null,
  worker_id uuid,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  outcome text constraint ${ns.relation('attempts_outcome_check')} check (outcome in ('successful', 'failed')),
  duration_ms double precision,
  error_type text,
  error_message text
)`,
    // listAttempts: one message's attempts in cursor order.
    `create index ${ns.relation('attempts_message')} on ${ns.table('attempts')} (message_id, id)`,
    // purgeAttempts: by start time.
    `create index ${ns.relation('attempts_started')} on ${ns.table('attempts')} (started_at)`,
  ]
}

/** Version 2: the progress a running handler reports (`ctx.progress()`, `broker.getMessage()`). */
function addProgress(ns: Namespace): string[] {
  return [`alter table ${ns.table('messages')} add column progress jsonb`]
}

/**
 * Version 3: what the live statistics and the dashboard read. An index of
 * finished messages by finish time serves `queueStats()`'s done
 * in the last minute and hour (`retained: 'estimate'`, the dashboard's live
 * snapshot) and the dashboard's one-hour throughput chart, `where state in
 * ('done', 'rejected') and updated_at > now() - interval '1 hour'`: they read
 * the last hour's entries instead of every retained row. `queue` and `state`
 * are included so those reads are index-only.
 */
function addStatsReadPaths(ns: Namespace): string[] {
  return [
    `create index ${ns.relation('messages_finished')} on ${ns.table('messages')} (updated_at) include (queue, state) where state in ('done', 'rejected')`,
    // Not an index (nothing on the hot path; ANALYZE builds it): the planner's
    // joint frequencies of (queue, state). Without them it multiplies the two
    // columns' frequencies, expects thousands of queued rows in a queue that
    // has none, and the dashboard's messages list `where queue = $1 and state =
    // $2 order by id desc limit 51` walks the whole primary key (1.7 s at a
    // million rows) instead of the state's partial index (0.2 ms).
    // A statistics object is created in the search path unless qualified: put it beside its table.
    `create statistics ${quoteIdentifier(ns.schema)}.${ns.relation('messages_queue_state')} (mcv) on queue, state from ${ns.table('messages')}`,
  ]
}

/**
 * Version 4: what the purge reads. Finished rows past the retention are
 * found by finish time: done and rejected rows through `messages_finished`
 * (version 3), cancelled ones through this index (few rows; written only by
 * a cancellation). Without it the purge's filter was not covered by any
 * index, and every purge, even one with nothing to delete, read the whole
 * table: 1.41 s at 10 million retained rows (docs/scaling.md).
 */
function addPurgeReadPath(ns: Namespace): string[] {
  return [
    `create index ${ns.relation('messages_cancelled')} on ${ns.table('messages')} (updated_at) where state = 'cancelled'`,
  ]
}

/**
 * The migrations of `@iddqueue/core`: messages (with its partial index over
 * ready rows), deduplication, queue_control, workers and attempts.
 *
 * @example
 * await migrate(db, { namespace: namespace(), owners: [coreMigrations] })
 */
export const coreMigrations: MigrationSet = Object.freeze({
  owner: '@iddqueue/core',
  migrations: Object.freeze([
    { version: 1, name: 'core-tables', up: createCoreTables },
    { version: 2, name: 'message-progress', up: addProgress },
    { version: 3, name: 'stats-read-paths', up: addStatsReadPaths },
    { version: 4, name: 'purge-read-path', up: addPurgeReadPath },
  ]),
})
