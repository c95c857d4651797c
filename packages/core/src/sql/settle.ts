import type { Namespace } from '@iddqueue/schema'
import { ASYNC_COMMIT } from './async-commit.js'
import type { SettleClauses } from './settle-clauses.js'

/**
 * Acknowledges a batch of successful messages: `done`, failure cleared; or,
 * for a broker with `deleteOnSuccess`, deleted. Only rows still consumed by
 * this worker change; a message that crash recovery gave to another worker
 * (or that was cancelled or deleted meanwhile) is left alone, and its id
 * comes back: the statement returns the ids it did **not** acknowledge, so
 * the usual batch returns no row at all. The price is one hashed filter
 * over the batch's ids, not measurably slower than the bare update in a
 * check of 1,000-row acks (about 10 ms each, either way).
 *
 * Parameters: ids, worker id.
 */
export function ackSql(ns: Namespace, deleteOnSuccess: boolean): string {
  return `with ${ackedRows(ns, deleteOnSuccess, 'acked', '')}
select s.id from unnest($1::uuid[]) as s(id) where s.id not in (select id from acked)`
}

/**
 * The acknowledgement with a plugin's clauses in it (decision 0016), for a
 * batch of successes one of whose messages they concern: the acknowledged
 * rows as `settled (id, state, queue, options)`, the plugin's CTEs after
 * them, and its `effect` evaluated once. Same parameters and rows as
 * {@link ackSql}: the ids it did not acknowledge, usually none. (The
 * general settle with clauses returns every row it changed: 26 ms against
 * 20 for a batch of ~800 limited messages, decision 0019.)
 */
export function ackWithClausesSql(
  ns: Namespace,
  deleteOnSuccess: boolean,
  clauses: SettleClauses,
): string {
  // The effect sits in a one-time filter: the statement usually returns no
  // row, and a select-list expression would then never run.
  return `with ${ackedRows(ns, deleteOnSuccess, 'settled', ", 'done'::text as state, m.queue, m.options")}${
    clauses.ctes ? `,\n${clauses.ctes}` : ''
  },
settle_effect as materialized (select ${clauses.effect ?? 'null'} as effect)
select s.id from unnest($1::uuid[]) as s(id)
 where (select count(*) from settle_effect) > 0 and s.id not in (select id from settled)`
}

/** The CTE `name` of the acknowledged rows, returning `id` and `extra`. */
function ackedRows(ns: Namespace, deleteOnSuccess: boolean, name: string, extra: string): string {
  const messages = ns.table('messages')
  const held = `m.id = any($1::uuid[]) and ${heldBy('$2')} and ${ASYNC_COMMIT}`
  return `${name} as (
  ${
    deleteOnSuccess
      ? `delete from ${messages} m where ${held}`
      : `update ${messages} m set state = 'done', failure = null, updated_at = now() where ${held}`
  } returning m.id${extra}
)`
}

/**
 * Which of a batch's messages this worker had already settled, and how:
 * asked only about outcomes a settle or ack statement did not write, to
 * tell a write refused (the message was no longer this worker's) from one
 * retried after a lost connection whose first attempt had committed. Only
 * finished states keep the worker's id; a message handed back to the queue
 * does not, so such an outcome cannot be told apart.
 *
 * Parameters: ids, worker id.
 */
export function settledByWorkerSql(ns: Namespace): string {
  return `select m.id, m.state from ${ns.table('messages')} m
 where m.id = any($1::uuid[]) and m.worker_id = $2 and m.state in ('done', 'rejected', 'cancelled')`
}

/**
 * "Still consumed by this worker", written so the planner cannot use it to
 * pick the consumed partial index and has to probe the primary key for each
 * id: during a drain that index holds entries for every row already
 * acknowledged, which each later statement would scan again (measured: an
 * ack of 500 rows took 69 ms instead of 7 ms with a million retained rows).
 */
function heldBy(worker: string): string {
  return `coalesce(m.state = 'consumed' and m.worker_id = ${worker}, false)`
}

/**
 * Settles a batch of outcomes of any kind in one statement: `done`,
 * `rejected`, `cancelled`, or back to `queued` (a retry after a delay, or a
 * release that keeps the eta when the delay is null). A message whose
 * cancellation was requested never goes back to `queued`: it becomes
 * `cancelled`. With `deleteOnSuccess`, successes are deleted instead of
 * marked `done` (and still returned as `done`). Returns the rows that
 * changed.
 *
 * A retry clears the progress the failed attempt reported; otherwise the
 * last progress the attempt reported (if any) is written with its outcome.
 *
 * Parameters: ids, target states, delays in ms (null keeps the eta),
 * retry increments, failure JSON (null keeps the stored one; cleared on
 * done), worker id, progress JSON (null keeps the stored one).
 */
export function settleSql(ns: Namespace, deleteOnSuccess: boolean): string {
  const { ctes, rows } = settledRows(ns, deleteOnSuccess, '')
  return ctes === '' ? rows : `with ${ctes}\nselect id, state, queue from ${rows}`
}

/**
 * The settle statement with a plugin's clauses in it (decision 0016): the
 * changed rows as `settled (id, state, queue, options)`, the plugin's CTEs
 * after them, in one statement and so one round trip and one transaction.
 * Same parameters and result rows as {@link settleSql}.
 */
export function settleWithClausesSql(
  ns: Namespace,
  deleteOnSuccess: boolean,
  clauses: SettleClauses,
): string {
  const { ctes, rows } = settledRows(ns, deleteOnSuccess, ', m.options')
  const settled =
    ctes === '' ? `settled as (\n${rows}\n)` : `${ctes},\nsettled as (select * from ${rows})`
  return `with ${settled}${clauses.ctes ? `,\n${clauses.ctes}` : ''}
select s.id, s.state, s.queue, ${clauses.effect ?? 'null'} as effect from settled s`
}

/**
 * The rows a settle changes, returning `id, state, queue` and `extra`:
 * one update, or with `deleteOnSuccess` a delete and an update whose rows
 * are read from two CTEs (`ctes`, to put after `with`; `rows` names them).
 */
function settledRows(ns: Namespace, deleteOnSuccess: boolean, extra: string) {
  const messages = ns.table('messages')
  const outcomes = `unnest($1::uuid[], $2::text[], $3::float8[], $4::int[], $5::text[], $7::text[])
    as s(id, state, delay_ms, retried, failure, progress)`
  const held = `m.id = s.id and m.id = any($1::uuid[]) and ${heldBy('$6')} and ${ASYNC_COMMIT}`
  const update = (only: string) => `update ${messages} m
   set state = case when m.cancel_requested and s.state = 'queued' then 'cancelled' else s.state end,
       eta = case when s.state = 'queued' and s.delay_ms is not null
                  then now() + s.delay_ms * interval '1 millisecond' else m.eta end,
       retries = m.retries + s.retried,
       failure = case when s.state = 'done' then null else coalesce(s.failure::jsonb, m.failure) end,
       worker_id = case when s.state = 'queued' then null else m.worker_id end,
       progress = case when s.retried > 0 then null
                       when s.progress is not null then s.progress::jsonb else m.progress end,
       updated_at = now()
  from ${outcomes}
 where ${held}${only}
returning m.id, m.state, m.queue${extra}`
  if (!deleteOnSuccess) return { ctes: '', rows: update('') }
  return {
    ctes: `deleted as (
  delete from ${messages} m using ${outcomes}
   where ${held} and s.state = 'done'
  returning m.id, 'done'::text as state, m.queue${extra}
), updated as (
  ${update(" and s.state <> 'done'")}
)`,
    rows: `(select * from deleted union all select * from updated) as changed`,
  }
}

/**
 * A worker drops a claimed message it never started because its
 * cancellation was requested, and answers the canceller on the control
 * channel; result waiters are woken too.
 *
 * Parameters: ids, worker id, control channel, answers (one per id), result channel.
 */
export function dropCancelledSql(ns: Namespace): string {
  return `with dropped as (
  update ${ns.table('messages')} m set state = 'cancelled', updated_at = now()
    from unnest($1::uuid[], $4::text[]) as d(id, answer)
   where m.id = d.id and m.state = 'consumed' and m.worker_id = $2
  returning m.id, d.answer
)
select pg_notify($3, answer), pg_notify($5, id::text) from dropped`
}
