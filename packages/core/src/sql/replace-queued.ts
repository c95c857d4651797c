import type { Namespace } from '@iddqueue/schema'

/**
 * Debounce: gives a still-queued message the actor, arguments, options,
 * priority and eta of a newer send with its deduplication key, keeping its
 * id and enqueue time. A message a worker has claimed (or that finished, or
 * is gone) is left alone and nothing is returned: the caller stores a new
 * message instead. Under READ COMMITTED the update waits for a claim that
 * holds the row and then re-checks `state`, so a message is never replaced
 * after a worker took it. Wakes the queue's workers, as the eta may be
 * sooner.
 *
 * Parameters: id, actor, args (JSON text), options (JSON text), priority,
 * delay in ms (or null), eta in epoch ms (or null), the wake channel.
 */
export function replaceQueuedSql(ns: Namespace): string {
  return `with replaced as (
  update ${ns.table('messages')} m
     set actor = $2, args = $3::text::jsonb, options = $4::text::jsonb, priority = $5,
         eta = case when $7::float8 is not null then to_timestamp($7::float8 / 1000.0)
                    when $6::float8 is not null then now() + $6::float8 * interval '1 millisecond'
                    else now() end,
         updated_at = now()
   where m.id = $1 and m.state = 'queued'
  returning m.queue
), woken as (
  select pg_notify($8, queue) from replaced
)
select (select count(*) from replaced)::int as replaced, (select count(*) from woken)::int as woken`
}

/**
 * Points a live deduplication key at another message (or the same one with
 * new content) and restarts its TTL. Runs after a claim of the key failed,
 * which locked its row, so concurrent senders of the key take turns.
 *
 * Parameters: queue, key, message id, message JSON (text), TTL in ms.
 */
export function repointDeduplicationKeySql(ns: Namespace): string {
  return `update ${ns.table('deduplication')}
   set message_id = $3, message = $4::text::jsonb,
       expires_at = clock_timestamp() + $5 * interval '1 millisecond', created_at = now()
 where queue = $1 and key = $2`
}
