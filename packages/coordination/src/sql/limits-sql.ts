import type { Namespace } from '@iddqueue/schema'
import { table } from '../tables.js'

/**
 * Sets a limit's values (null clears one), keeping any hold.
 *
 * Parameters: scope, name, concurrency, rate limit, rate period in ms.
 */
export function setLimitSql(ns: Namespace): string {
  return `insert into ${table(ns, 'coordination_limits')} as l (scope, name, concurrency, rate_limit, rate_period_ms)
values ($1, $2, $3::int, $4::int, $5::bigint)
on conflict (scope, name) do update
   set concurrency = excluded.concurrency, rate_limit = excluded.rate_limit,
       rate_period_ms = excluded.rate_period_ms, updated_at = now()`
}

/**
 * Deletes a limit that has no values left and no hold in the future.
 *
 * Parameters: scope, name.
 */
export function dropEmptyLimitSql(ns: Namespace): string {
  return `delete from ${table(ns, 'coordination_limits')}
 where scope = $1 and name = $2 and concurrency is null and rate_limit is null
   and (held_until is null or held_until <= now())`
}

/**
 * Holds a key until `now() + $2 ms` (a later hold wins), for `RateLimited`.
 *
 * Parameters: key, delay in ms.
 */
export function holdKeySql(ns: Namespace): string {
  return `insert into ${table(ns, 'coordination_limits')} as l (scope, name, held_until)
values ('key', $1, now() + $2::float8 * interval '1 millisecond')
on conflict (scope, name) do update
   set held_until = greatest(l.held_until, excluded.held_until), updated_at = now()`
}

/** Every limit, by scope and name. */
export function listLimitsSql(ns: Namespace): string {
  return `select scope, name, concurrency, rate_limit, rate_period_ms::float8 as rate_period_ms,
       case when held_until > now() then held_until end as held_until, updated_at
  from ${table(ns, 'coordination_limits')} order by scope, name`
}
