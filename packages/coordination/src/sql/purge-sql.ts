import type { Namespace } from '@iddqueue/schema'
import { type CoordinationTableName, table } from '../tables.js'

/** The tables whose rows carry an `expires_at`, each purged through its expiry index. */
export const EXPIRING_TABLES: readonly CoordinationTableName[] = Object.freeze([
  'coordination_slots',
  'coordination_buckets',
  'coordination_hits',
  'coordination_barriers',
  'coordination_groups',
])

/**
 * Deletes up to `$1` expired rows of one table (a group's members go with
 * it). Called in a loop so each statement stays short.
 *
 * Parameters: batch size.
 */
export function purgeExpiredSql(ns: Namespace, name: CoordinationTableName): string {
  const rows = table(ns, name)
  return `with deleted as (
  delete from ${rows} where ctid in (select ctid from ${rows} where expires_at <= now() limit $1)
  returning 1
)
select count(*)::int as deleted from deleted`
}

/**
 * Deletes up to `$1` lock rows of keys with no live slot or hit. Safe
 * against a concurrent acquire: acquiring always upserts the lock row, so
 * it is recreated (and still serialises) if it was deleted.
 *
 * Parameters: batch size.
 */
export function purgeLocksSql(ns: Namespace): string {
  const locks = table(ns, 'coordination_locks')
  return `with deleted as (
  delete from ${locks} where ctid in (
    select l.ctid from ${locks} l
     where not exists (select 1 from ${table(ns, 'coordination_slots')} s where l.kind = 'concurrent' and s.key = l.key)
       and not exists (select 1 from ${table(ns, 'coordination_hits')} h where l.kind = 'window' and h.key = l.key)
     limit $1
  )
  returning 1
)
select count(*)::int as deleted from deleted`
}

/**
 * Deletes up to `$1` rate windows with no start left inside their period
 * (a claim updates its window's `updated_at`, so the newest start is no
 * later than it). Safe against a concurrent claim: the delete re-checks
 * the row after any lock, and a claim recreates a deleted window empty.
 *
 * Parameters: batch size.
 */
export function purgeRateWindowsSql(ns: Namespace): string {
  const rates = table(ns, 'coordination_rates')
  return `with deleted as (
  delete from ${rates} where ctid in (
    select ctid from ${rates} where updated_at < now() - period_ms * interval '1 millisecond' limit $1)
    and updated_at < now() - period_ms * interval '1 millisecond'
  returning 1
)
select count(*)::int as deleted from deleted`
}
