import type { Namespace } from '@iddqueue/schema'

/**
 * Opens attempt records (history), one per message starting, in one
 * statement over arrays. The start time is PostgreSQL's.
 *
 * Parameters: attempt ids, message ids, actors, queues, worker ids.
 */
export function startAttemptsSql(ns: Namespace): string {
  return `insert into ${ns.table('attempts')} (id, message_id, actor, queue, worker_id, started_at)
select t.id, t.message_id, t.actor, t.queue, t.worker_id, now()
  from unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::uuid[])
    as t(id, message_id, actor, queue, worker_id)`
}

/**
 * Closes attempt records in one statement over arrays, inside the settle
 * transaction: the finish time is when the outcome was recorded (PostgreSQL's
 * clock), the duration is the handler's, measured by the worker.
 *
 * Parameters: attempt ids, outcomes, durations in ms, error types, error texts.
 */
export function finishAttemptsSql(ns: Namespace): string {
  return `update ${ns.table('attempts')} a
   set finished_at = greatest(now(), a.started_at), outcome = f.outcome,
       duration_ms = f.duration_ms, error_type = f.error_type, error_message = f.error_message
  from unnest($1::uuid[], $2::text[], $3::float8[], $4::text[], $5::text[])
    as f(id, outcome, duration_ms, error_type, error_message)
 where a.id = f.id`
}

/**
 * One page of a message's attempts in cursor (UUID) order, served by the
 * index (message_id, id).
 *
 * Parameters: message id, cursor (null: from the start), page size.
 */
export function listAttemptsSql(ns: Namespace): string {
  return `select id, message_id, actor, queue, worker_id, started_at, finished_at, outcome,
       duration_ms, error_type, error_message
  from ${ns.table('attempts')}
 where message_id = $1 and ($2::uuid is null or id > $2::uuid)
 order by id
 limit $3`
}

/**
 * Deletes up to `$2` attempts (incomplete ones included) that started more
 * than `$1` ms ago, found by the index (started_at). Called in a loop so each
 * statement stays short. Returns how many rows it deleted.
 *
 * Parameters: older-than in ms, batch size.
 */
export function purgeAttemptsSql(ns: Namespace): string {
  const attempts = ns.table('attempts')
  return `with doomed as (
  select id from ${attempts}
   where started_at < now() - $1::float8 * interval '1 millisecond'
   limit $2
), deleted as (
  delete from ${attempts} a using doomed where a.id = doomed.id returning 1
)
select count(*)::int as deleted from deleted`
}
