import type { Namespace } from '@iddqueue/schema'

/**
 * Claims a deduplication key for a message, unless a live (unexpired) claim
 * exists. Returns a row only when this call claimed the key. The TTL is
 * measured by PostgreSQL's clock.
 *
 * Parameters: queue, key, message id, message JSON, TTL in ms. The JSON is
 * sent as text and cast here: a parameter typed jsonb would make postgres.js
 * encode the string again, storing a JSON string instead of the object.
 */
export function claimDeduplicationKeySql(ns: Namespace): string {
  return `insert into ${ns.table('deduplication')} as d (queue, key, message_id, message, expires_at)
values ($1, $2, $3, $4::text::jsonb, clock_timestamp() + $5 * interval '1 millisecond')
on conflict (queue, key) do update
   set message_id = excluded.message_id, message = excluded.message,
       expires_at = excluded.expires_at, created_at = now()
 where d.expires_at <= clock_timestamp()
returning message_id`
}

/**
 * Reads the message that holds a deduplication key. Runs as its own
 * statement after a failed claim so that, under READ COMMITTED, it sees the
 * concurrent claim that won.
 *
 * Parameters: queue, key.
 */
export function readDeduplicationKeySql(ns: Namespace): string {
  return `select message from ${ns.table('deduplication')} where queue = $1 and key = $2`
}
