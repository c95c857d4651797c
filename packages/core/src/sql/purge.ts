import type { Namespace } from '@iddqueue/schema'

/**
 * Deletes up to `$2` finished (done, rejected, cancelled) messages last
 * changed more than `$1` ms ago, oldest first. Called in a loop so each
 * statement stays short. Returns how many rows it deleted.
 *
 * Each state group is read from its index by finish time (`messages_finished`
 * for done and rejected, `messages_cancelled`), so a purge reads the rows it
 * deletes, not the table: one with nothing to delete is two index probes
 * however many rows are retained.
 *
 * Parameters: older-than in ms, batch size.
 */
export function purgeMessagesSql(ns: Namespace): string {
  const messages = ns.table('messages')
  const before = `updated_at < now() - $1 * interval '1 millisecond'`
  return `with doomed as (
  (select id from ${messages} where state in ('done', 'rejected') and ${before} order by updated_at limit $2)
  union all
  (select id from ${messages} where state = 'cancelled' and ${before} order by updated_at limit $2)
  limit $2
), deleted as (
  -- \`id = any(array(...))\`: primary-key probes, never a join that reads the table.
  delete from ${messages} m where m.id = any(array(select id from doomed)) returning 1
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
