import type { Namespace } from '@iddqueue/schema'

/**
 * Deletes up to `$2` finished (done, rejected, cancelled) messages last
 * changed more than `$1` ms ago. Called in a loop so each statement stays
 * short. Returns how many rows it deleted.
 *
 * Parameters: older-than in ms, batch size.
 */
export function purgeMessagesSql(ns: Namespace): string {
  const messages = ns.table('messages')
  return `with doomed as (
  select id from ${messages}
   where state in ('done', 'rejected', 'cancelled') and updated_at < now() - $1 * interval '1 millisecond'
   limit $2
), deleted as (
  delete from ${messages} m using doomed where m.id = doomed.id returning 1
)
select count(*)::int as deleted from deleted`
}

/**
 * Deletes up to `$1` expired deduplication keys.
 *
 * Parameters: batch size.
 */
export function purgeDeduplicationSql(ns: Namespace): string {
  const table = ns.table('deduplication')
  return `with deleted as (
  delete from ${table} d using (
    select queue, key from ${table} where expires_at <= clock_timestamp() limit $1
  ) doomed where d.queue = doomed.queue and d.key = doomed.key returning 1
)
select count(*)::int as deleted from deleted`
}
