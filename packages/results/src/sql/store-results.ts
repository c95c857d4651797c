import type { Namespace } from '@iddqueue/schema'

/**
 * Stores a batch of results (one row per message, the latest write wins,
 * since delivery is at least once) and notifies the result channel. Runs
 * inside the worker's settle transaction, so a result exists exactly when
 * its outcome does, and its notification is sent on commit.
 *
 * Parameters: message ids, statuses, values (JSON text or null), failures
 * (JSON text or null), TTLs in ms, the result channel, notification
 * payloads (comma-separated ids, one per chunk).
 */
export function storeResultsSql(ns: Namespace): string {
  const results = ns.table('results')
  return `with stored as (
  insert into ${results} as r (message_id, status, value, failure, expires_at)
  select id, status, value::jsonb, failure::jsonb, now() + ttl_ms * interval '1 millisecond'
    from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::float8[])
      as s(id, status, value, failure, ttl_ms)
  on conflict (message_id) do update
     set status = excluded.status, value = excluded.value, failure = excluded.failure,
         expires_at = excluded.expires_at, stored_at = now()
  returning 1
)
select count(pg_notify($6, payload))::int as notified from unnest($7::text[]) as payload`
}
