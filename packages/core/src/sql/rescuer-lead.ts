import type { Namespace } from '@iddqueue/schema'

/**
 * Whether this worker leads the namespace's maintenance now: it is the
 * longest-registered worker with a fresh heartbeat, and it took the
 * namespace's rescuer lock for the calling transaction. Leadership passes to
 * the next worker once the leader stops or goes stale; the lock keeps two
 * workers that both believe they lead (during that handover) from sweeping
 * at once. `case` fixes the order: only the leader tries the lock. The
 * transaction may sit idle for stale-after ms at most: the server then ends
 * its session, so a leader cut off mid-sweep releases the lock.
 *
 * Parameters: the rescuer lock key, stale-after in ms, worker id.
 */
export function rescuerLeadSql(ns: Namespace): string {
  // A leader cut off mid-transaction by a network that drops packets would
  // hold the lock until TCP keepalive gives up (two hours by default) and no
  // worker could sweep meanwhile: past stale-after idle, the server ends it.
  return `select set_config('idle_in_transaction_session_timeout', ($2::bigint)::text, true),
  case
  when coalesce((select id from ${ns.table('workers')}
                  where heartbeat_at > now() - $2 * interval '1 millisecond'
                  order by started_at, id limit 1) = $3::uuid, true)
  then pg_try_advisory_xact_lock($1::bigint)
  else false end as lead`
}
