import type { Namespace } from '@iddqueue/schema'
import { table } from '../tables.js'
import { nameOf, scopeOf } from './claim-limits-sql.js'
import { runningCountsSql } from './running-sql.js'

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

/**
 * Every limit, by scope and name: the stored ones (setLimit, holds), the
 * concurrency limits of running messages, the rate windows and the limits
 * the caller declares, with the messages running in each now, and for a
 * rate the places free now and when the next one frees.
 *
 * Parameters: the declared limits' scopes, names, concurrencies, rate
 * limits and rate periods in ms (arrays of one length; nulls allowed).
 */
export function listLimitsSql(ns: Namespace): string {
  const limits = table(ns, 'coordination_limits')
  const rates = table(ns, 'coordination_rates')
  const rateLimit = 'coalesce(l.rate_limit, t.cap, d.rate_limit)'
  const periodMs = 'coalesce(l.rate_period_ms, t.period_ms, d.rate_period_ms)'
  const period = `${periodMs} * interval '1 millisecond'`
  return `with running as (
  select ${scopeOf('r.id')} as scope, ${nameOf('r.id')} as name, r.n as running, r.cap, r.started_at
    from (${runningCountsSql(ns)}) r
), declared as (
  select * from unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::bigint[])
    as d(scope, name, concurrency, rate_limit, rate_period_ms)
), keys as (
  select scope, name from ${limits} union select scope, name from running
  union select scope, name from ${rates} union select scope, name from declared
)
select x.scope, x.name, coalesce(l.concurrency, k.cap, d.concurrency) as concurrency,
       ${rateLimit} as rate_limit, ${periodMs}::float8 as rate_period_ms,
       case when l.held_until > now() then l.held_until end as held_until,
       coalesce(k.running, 0) as running,
       case when ${rateLimit} is not null then greatest(${rateLimit} - coalesce(
         (select count(*)::int from unnest(t.starts) s where s > now() - ${period}), 0), 0) end as tokens,
       (select s + ${period} from unnest(t.starts) s order by s desc offset ${rateLimit} - 1 limit 1) as full_until,
       coalesce(greatest(l.updated_at, k.started_at, t.updated_at), now()) as updated_at
  from keys x
  left join ${limits} l on l.scope = x.scope and l.name = x.name
  left join running k on k.scope = x.scope and k.name = x.name
  left join ${rates} t on t.scope = x.scope and t.name = x.name
  left join declared d on d.scope = x.scope and d.name = x.name
 order by 1, 2`
}
