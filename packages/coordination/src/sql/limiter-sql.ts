import type { Namespace } from '@iddqueue/schema'
import { table } from '../tables.js'

/**
 * Locks the limiter key's row (creating it the first time), so that the
 * count which follows, in its own statement and so its own snapshot, sees
 * every holder committed before this one got the lock.
 *
 * Parameters: kind, key.
 */
export function lockKeySql(ns: Namespace): string {
  return `insert into ${table(ns, 'coordination_locks')} as l (kind, key) values ($1, $2)
on conflict (kind, key) do update set kind = excluded.kind`
}

/**
 * Takes a slot (concurrent limiter) or records a hit (window limiter) when
 * fewer than the limit are live, after {@link lockKeySql} in the same
 * transaction. Returns the grant (null when refused) and how long until the
 * earliest live one expires, so a refused waiter knows when to try again.
 * Expired rows of the key are deleted on the way.
 *
 * Parameters: key, new row id, limit, TTL or window in ms.
 */
export function takeSql(ns: Namespace, kind: 'concurrent' | 'window'): string {
  const rows = table(ns, kind === 'concurrent' ? 'coordination_slots' : 'coordination_hits')
  const id = kind === 'concurrent' ? 'holder' : 'id'
  return `with t as (select clock_timestamp() as now),
gone as (delete from ${rows} where key = $1 and expires_at <= (select now from t)),
live as (
  select count(*)::int as n, min(expires_at) as next
    from ${rows} where key = $1 and expires_at > (select now from t)
),
taken as (
  insert into ${rows} (key, ${id}, acquired_at, expires_at)
  select $1, $2::uuid, t.now, t.now + $4::float8 * interval '1 millisecond'
    from live, t where live.n < $3::int
  returning acquired_at, expires_at
)
select taken.acquired_at, taken.expires_at, live.n as live,
       greatest(0, extract(epoch from (live.next - t.now)) * 1000)::float8 as retry_in_ms
  from live cross join t left join taken on true`
}

/**
 * Releases one slot of a concurrent limiter and, if it was still held,
 * notifies the coordination channel so that one waiter per process tries
 * again.
 *
 * Parameters: key, holder id, channel, payload.
 */
export function releaseSql(ns: Namespace): string {
  return `with released as (
  delete from ${table(ns, 'coordination_slots')} where key = $1 and holder = $2::uuid returning 1
)
select count(pg_notify($3, $4))::int as released from released`
}

/**
 * Takes one token of the current fixed bucket of a bucket limiter, unless
 * the bucket already gave out its limit. Buckets start at multiples of
 * `bucketMs` since the epoch, by PostgreSQL's clock. Returns the count
 * after taking (null when refused), the bucket's start and end, and the
 * time until the next bucket.
 *
 * Parameters: key, limit, bucket length in ms.
 */
export function takeTokenSql(ns: Namespace): string {
  const buckets = table(ns, 'coordination_buckets')
  return `with t as (select clock_timestamp() as now),
b as (
  select t.now, floor(extract(epoch from t.now) * 1000 / $3::bigint)::bigint as bucket from t
),
taken as (
  insert into ${buckets} as c (key, bucket, count, expires_at)
  select $1, b.bucket, 1, to_timestamp((b.bucket + 1) * $3::bigint / 1000.0) from b
  on conflict (key, bucket) do update set count = c.count + 1 where c.count < $2::int
  returning count
)
select (select count from taken) as count, b.now as acquired_at,
       to_timestamp(b.bucket * $3::bigint / 1000.0) as bucket_start,
       to_timestamp((b.bucket + 1) * $3::bigint / 1000.0) as expires_at,
       greatest(0, (b.bucket + 1) * $3::bigint - extract(epoch from b.now) * 1000)::float8 as retry_in_ms
  from b`
}
