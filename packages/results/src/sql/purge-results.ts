import type { Namespace } from '@iddqueue/schema'

/**
 * Deletes up to `$1` expired results, through the `results_expires` index.
 * Called in a loop so each statement stays short. Returns how many rows it
 * deleted.
 *
 * Parameters: batch size.
 */
export function purgeResultsSql(ns: Namespace): string {
  const results = ns.table('results')
  return `with deleted as (
  delete from ${results} r using (
    select message_id from ${results} where expires_at <= now() limit $1
  ) doomed where r.message_id = doomed.message_id returning 1
)
select count(*)::int as deleted from deleted`
}

/**
 * Deletes the results of messages put back in their queue by
 * `broker.retryFailed()`, so a reader waits for the new run's.
 *
 * Parameters: message ids.
 */
export function deleteResultsSql(ns: Namespace): string {
  return `delete from ${ns.table('results')} where message_id = any($1::uuid[])`
}
