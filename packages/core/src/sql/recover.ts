import type { Namespace } from '@iddqueue/schema'

/**
 * Crash recovery: removes workers whose heartbeat is older than `$1` ms and
 * puts every message they held back in the queue,
 * keeping its eta and retry budget (a requested cancellation becomes
 * `cancelled` instead). Wakes the affected queues. Returns the recovered
 * messages' ids and queues.
 *
 * Parameters: stale-after in ms, the wake channel.
 */
export function recoverSql(ns: Namespace): string {
  const messages = ns.table('messages')
  const workers = ns.table('workers')
  return `with dead as (
  delete from ${workers} where heartbeat_at < now() - $1 * interval '1 millisecond' returning id
), recovered as (
  update ${messages} m
     set state = case when m.cancel_requested then 'cancelled' else 'queued' end,
         worker_id = null, updated_at = now()
   where m.state = 'consumed' and m.worker_id in (select id from dead)
  returning m.id, m.queue, m.state
), woken as (
  select pg_notify($2, queue) from (select distinct queue from recovered where state = 'queued') as q
)
select r.id, r.queue, r.state, (select count(*) from woken)::int as woken from recovered r`
}

/**
 * Puts back in the queue consumed messages whose worker is not registered at
 * all (removed by hand, or gone without settling). Rarer than dead workers,
 * and a scan of every consumed row, so workers run it less often.
 *
 * Parameters: the wake channel.
 */
export function recoverOrphansSql(ns: Namespace): string {
  const messages = ns.table('messages')
  return `with recovered as (
  update ${messages} m
     set state = case when m.cancel_requested then 'cancelled' else 'queued' end,
         worker_id = null, updated_at = now()
   where m.state = 'consumed'
     and (m.worker_id is null or not exists (select 1 from ${ns.table('workers')} w where w.id = m.worker_id))
  returning m.id, m.queue, m.state
), woken as (
  select pg_notify($1, queue) from (select distinct queue from recovered where state = 'queued') as q
)
select r.id, r.queue, r.state, (select count(*) from woken)::int as woken from recovered r`
}
