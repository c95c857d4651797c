import type { Namespace } from '@iddqueue/schema'

/**
 * Reads the unexpired results of some messages, one row per id asked for.
 * A message with no result row that is `cancelled` reads as cancelled: a
 * message cancelled before it started never reaches a settle hook.
 *
 * Parameters: message ids.
 */
export function readResultsSql(ns: Namespace): string {
  return `select k.id::text as id, r.status, r.value::text as value, r.failure::text as failure,
       m.id is not null as cancelled
  from unnest($1::uuid[]) as k(id)
  left join ${ns.table('results')} r on r.message_id = k.id and r.expires_at > now()
  left join ${ns.table('messages')} m
    on r.message_id is null and m.id = k.id and m.state = 'cancelled'`
}
