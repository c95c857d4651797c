import type { Namespace } from '@iddqueue/schema'
import { table } from '../tables.js'

/**
 * Creates a barrier, or replaces one whose TTL passed. Returns a row when
 * this call created it.
 *
 * Parameters: key, parties, TTL in ms.
 */
export function createBarrierSql(ns: Namespace): string {
  return `insert into ${table(ns, 'coordination_barriers')} as b (key, parties, arrived, created_at, expires_at)
values ($1, $2::int, 0, now(), now() + $3::float8 * interval '1 millisecond')
on conflict (key) do update
   set parties = excluded.parties, arrived = 0, created_at = now(), expires_at = excluded.expires_at
 where b.expires_at <= now()
returning 1 as created`
}

/**
 * Counts one arrival at a live barrier and, when it is the last, notifies
 * every waiter in the same statement (sent on commit).
 *
 * Parameters: key, channel, payload.
 */
export function arriveSql(ns: Namespace): string {
  return `with arrived as (
  update ${table(ns, 'coordination_barriers')} set arrived = arrived + 1
   where key = $1 and expires_at > now()
  returning arrived, parties
),
notified as (select count(pg_notify($2, $3)) as n from arrived where arrived = parties)
select arrived, parties from arrived, notified`
}

/**
 * A live barrier's arrivals and parties.
 *
 * Parameters: key.
 */
export function readBarrierSql(ns: Namespace): string {
  return `select arrived, parties from ${table(ns, 'coordination_barriers')}
 where key = $1 and expires_at > now()`
}
