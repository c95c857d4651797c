import type { Namespace } from '@iddqueue/schema'

/**
 * Registers a worker (or re-registers one that was presumed dead).
 * Returns when the server started, as the heartbeat does.
 *
 * Parameters: id, host, pid, queues, concurrency.
 */
export function registerWorkerSql(ns: Namespace): string {
  return `insert into ${ns.table('workers')} (id, host, pid, queues, concurrency)
values ($1, $2, $3, $4::text[], $5)
on conflict (id) do update set heartbeat_at = now()
returning (extract(epoch from pg_postmaster_start_time()) * 1000)::float8 as server_started_ms`
}

/**
 * A heartbeat. Returns no row when the worker was presumed dead and
 * removed, so it can register again. Returns when the server started, so
 * the worker notices a restart (which may have lost its asynchronous
 * commits) even when none of its own statements failed.
 *
 * Parameters: worker id.
 */
export function heartbeatSql(ns: Namespace): string {
  return `update ${ns.table('workers')} set heartbeat_at = now() where id = $1
returning id, (extract(epoch from pg_postmaster_start_time()) * 1000)::float8 as server_started_ms`
}

/**
 * Removes a worker that stops gracefully.
 *
 * Parameters: worker id.
 */
export function deregisterWorkerSql(ns: Namespace): string {
  return `delete from ${ns.table('workers')} where id = $1`
}
