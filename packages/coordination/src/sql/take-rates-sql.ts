import { type Namespace, quoteIdentifier } from '@iddqueue/schema'
import { table } from '../tables.js'

/** Places of a rate window taken within the period before the claim's `now()`. */
export function takenSql(starts: string, periodMs: string): string {
  return `(select count(*)::int from unnest(${starts}) s where s > now() - ${periodMs} * interval '1 millisecond')`
}

/** The reserving function's name, qualified. */
export function takeRatesFunction(ns: Namespace): string {
  return `${quoteIdentifier(ns.schema)}.${ns.relation('coordination_take_rates')}`
}

/**
 * Reserves places in rate windows for a claim: for each window (`scopes`,
 * `names`, with its `caps` and `periods` in ms), up to `wanted` places,
 * and returns how many each `granted`.
 *
 * A guarded upsert, in window order: `insert ... on conflict do update`
 * re-reads the latest committed row (waiting for a concurrent claim of the
 * same window), so two claims never both take a window's last place. A
 * window's row keeps the start times of its places, newest first, as many
 * as its limit (or as are still within the period).
 *
 * A function (decision 0019), so the claim plans this upsert once per
 * connection rather than at every claim, and runs it only when a candidate
 * has a rate limit. Migration 7 creates it: a change to it needs a new
 * migration that replaces it.
 */
export function takeRatesFunctionSql(ns: Namespace): string {
  const taken = takenSql('t.starts', 'excluded.period_ms')
  return `create function ${takeRatesFunction(ns)}(scopes text[], names text[], caps int[], periods bigint[], wanted int[])
returns table (scope text, name text, granted int)
language plpgsql volatile as $$
#variable_conflict use_column
begin
  return query insert into ${table(ns, 'coordination_rates')} as t (scope, name, starts, cap, period_ms, granted)
  select n.scope, n.name, array_fill(now(), array[least(n.n, n.cap)]), n.cap, n.period_ms, least(n.n, n.cap)
    from unnest(scopes, names, caps, periods, wanted) as n(scope, name, cap, period_ms, n)
   order by n.scope, n.name
  on conflict (scope, name) do update
     set (starts, granted, cap, period_ms, updated_at) = (
       select array(select s from unnest(t.starts || array_fill(now(), array[g.n])) with ordinality u(s, i)
                     order by s desc, i desc limit greatest(excluded.cap, ${taken} + g.n)),
              g.n, excluded.cap, excluded.period_ms, now()
         from (select greatest(least(excluded.granted, excluded.cap - ${taken}), 0) as n) g)
  returning t.scope, t.name, t.granted;
end
$$`
}
