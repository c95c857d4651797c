import type { Namespace } from '@iddqueue/schema'

/**
 * Reconciliation after a reconnect: puts back in the queue the messages the
 * database says worker `$1` holds but that the worker is not running,
 * buffering or settling (`$2`, their ids). A requested cancellation becomes
 * `cancelled` instead, as in crash recovery. Wakes the affected queues.
 *
 * They exist because the worker's claims and acknowledgements commit
 * asynchronously (decision 0007): a PostgreSQL crash can lose an
 * acknowledgement the worker was told succeeded, or a claim that timed out
 * can commit after the worker gave up on it.
 *
 * Parameters: worker id, the ids it holds, the wake channel.
 */
export function reconcileSql(ns: Namespace): string {
  const messages = ns.table('messages')
  return `with reconciled as (
  update ${messages} m
     set state = case when m.cancel_requested then 'cancelled' else 'queued' end,
         worker_id = null, updated_at = now()
   where m.state = 'consumed' and m.worker_id = $1 and m.id <> all($2::uuid[])
  returning m.id, m.queue, m.state
), woken as (
  select pg_notify($3, queue) from (select distinct queue from reconciled where state = 'queued') as q
)
select r.id, r.queue, r.state, (select count(*) from woken)::int as woken from reconciled r`
}
