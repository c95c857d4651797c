import type { Namespace } from '@iddqueue/schema'

/**
 * Whether this worker leads the namespace's maintenance now: it is the
 * longest-registered worker with a fresh heartbeat, and it took the
 * namespace's rescuer lock for the calling transaction. Leadership passes to
 * the next worker once the leader stops or goes stale; the lock keeps two
 * workers that both believe they lead (during that handover) from sweeping
 * at once. `case` fixes the order: only the leader tries the lock.
 *
 * Parameters: the rescuer lock key, stale-after in ms, worker id.
 */
export function rescuerLeadSql(ns: Namespace): string {
  return `select case
  when coalesce((select id from ${ns.table('workers')}
                  where heartbeat_at > now() - $2 * interval '1 millisecond'
                  order by started_at, id limit 1) = $3::uuid, true)
  then pg_try_advisory_xact_lock($1::bigint)
  else false end as lead`
}
