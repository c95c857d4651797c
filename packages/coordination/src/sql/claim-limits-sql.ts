import type { Namespace } from '@iddqueue/schema'
import { table } from '../tables.js'
import { hasRunningLimitSql, runningCountsSql, runningFunction, runningOf } from './running-sql.js'
import { takenSql, takeRatesFunction } from './take-rates-sql.js'

/**
 * A message's limits, as stored in its options: `options.limits`, a list of
 * `{ id, limit, periodMs? }` where `id` is `<kind><scope>:<name>`: kind `c`
 * (concurrency) or `r` (rate), scope `k` (key), `a` (actor) or `q` (queue).
 * The first is the message's fairness group (its most specific limit).
 */
const LIMITS = `options->'limits'`

/** The most limits a message carries: one per kind and scope. */
export const MAX_LIMITS = 6

/** `scope` and `name` of a limit id expression. */
export function scopeOf(id: string): string {
  return `(case substr(${id}, 2, 1) when 'k' then 'key' when 'a' then 'actor' else 'queue' end)`
}
export function nameOf(id: string): string {
  return `substr(${id}, 4)`
}

/**
 * The `with` clause of a limited claim: the ids of the limits saturated
 * (as many messages running as the limit allows, counted from the
 * `consumed` rows; a rate window full) or held (`RateLimited` key) at the
 * claim's snapshot, so the ready probes step over their rows (no
 * head-of-line blocking). Only a pre-filter: the pick below is what is
 * strict.
 */
export function saturatedSql(ns: Namespace): string {
  const rates = table(ns, 'coordination_rates')
  const limits = table(ns, 'coordination_limits')
  return `claim_saturated(id) as materialized (
  select x.id from (${runningCountsSql(ns)}) x
    left join ${limits} l on l.scope = ${scopeOf('x.id')} and l.name = ${nameOf('x.id')}
   where x.n >= coalesce(l.concurrency, x.cap)
  union all
  select 'r' || left(t.scope, 1) || ':' || t.name from ${rates} t
    left join ${limits} l on l.scope = t.scope and l.name = t.name
   where ${takenSql('t.starts', 'coalesce(l.rate_period_ms, t.period_ms)')} >= coalesce(l.rate_limit, t.cap)
  union all
  select id from ${limits} l cross join lateral (values ('ck:' || l.name), ('rk:' || l.name)) v(id)
   where l.scope = 'key' and l.held_until > now()
)`
}

/**
 * The `eligible` clause: a ready row `r` none of whose first `places`
 * limits is saturated or held. One hashed `not in` per place (at most
 * {@link MAX_LIMITS}), so a row costs a few hash probes however many keys
 * are saturated; `places` is the most limits a message of the worker's
 * actors carries, so the planner's estimate of the clause stays close to
 * the truth (six unused probes made it pick a sequential scan).
 */
export function eligibleSql(places: number): string {
  return `r.${LIMITS} is null or (${Array.from(
    { length: Math.max(1, Math.min(places, MAX_LIMITS)) },
    (_, i) => `coalesce(r.${LIMITS}->${i}->>'id', '') not in (select s.id from claim_saturated s)`,
  ).join(' and ')})`
}

/**
 * The earliest time a row stepped over because of a limit may become
 * eligible: a held key's end, or the next free place of a full rate window.
 * A worker whose claim came back short sleeps until then (or a release
 * notification), not for its poll interval.
 */
export function wakeAtSql(ns: Namespace): string {
  const rates = table(ns, 'coordination_rates')
  const limits = table(ns, 'coordination_limits')
  return `(select min(w.at) from (
    select l.held_until as at from ${limits} l where l.held_until > now()
    union all
    select (select s from unnest(t.starts) s order by s desc offset coalesce(l.rate_limit, t.cap) - 1 limit 1)
           + coalesce(l.rate_period_ms, t.period_ms) * interval '1 millisecond'
      from ${rates} t left join ${limits} l on l.scope = t.scope and l.name = t.name
  ) w where w.at > now())`
}

/** The ids a pick chose, from its `claim_picked` CTE. */
const PICKED_IDS = 'select p.mid from claim_picked p'

/** Candidates refused: the next claim, with the pre-filter, steps over their limits. */
const PICKED_MORE =
  '((select count(*) from claim_picked) < (select count(*) from claim_candidates))'

/**
 * The claim's pick (decisions 0014 and 0018), over `claim_candidates (id,
 * options, pos)`, one candidate per row the claim may take:
 *
 * 1. each candidate's limits, each ranked among the candidates of that
 *    limit in claim order;
 * 2. per limit: what it allows (a stored override, else the message's
 *    declared value) and what it has used. A concurrency limit counts its
 *    running messages under a lock (`runningFunctionSql`), so the
 *    count is exact; a rate window counts its places taken in the period;
 * 3. the candidates all of whose limits have room for their rank fit;
 * 4. each rate window reserves the places of the fitting candidates
 *    (`takeRatesFunctionSql`, called only when a fitting candidate has a
 *    rate limit); a candidate is claimed when its rank among the fitting
 *    rows of each of its windows is within what that window granted.
 *
 * Candidates with no limit are claimed as they are. A candidate refused by
 * one limit leaves the places of its other limits free: never a place too
 * many. `more` says that candidates were refused.
 */
export function pickSql(
  ns: Namespace,
  places: number,
): { ctes: string; ids: string; more: string } {
  const rates = table(ns, 'coordination_rates')
  const limits = table(ns, 'coordination_limits')
  const list = `c.${LIMITS}`
  const first = Math.max(1, Math.min(places, MAX_LIMITS))
  const placesFrom = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, i) => `(${from + i})`).join(', ')
  // A fixed list of places, not jsonb_array_elements: its estimate of 100
  // rows per candidate made the plan's cost cross jit_above_cost, and JIT
  // compiling every claim cost ten times the claim itself (measured: 1,040
  // ms vs 66 ms per claim). The places the worker's actors use come first;
  // the others are read only for a message that has more (sent by a
  // process that declares more limits than this one).
  const limitsAt = (from: number, to: number, only = '') => `select c.id as mid, c.pos, e.v
            from claim_candidates c cross join (values ${placesFrom(from, to)}) p(i)
            cross join lateral (select ${list}->p.i as v) e
           where e.v is not null${only}`
  const rest =
    first < MAX_LIMITS
      ? `\n          union all\n          ${limitsAt(first, MAX_LIMITS, ` and ${list}->${first} is not null`)}`
      : ''
  return {
    ctes: `claim_lims as materialized (
  select x.mid, x.pos, x.v->>'id' as id, (x.v->>'limit')::int as cap, (x.v->>'periodMs')::bigint as period_ms,
         row_number() over (partition by x.v->>'id' order by x.pos) as rank
    from (${limitsAt(0, first)}${rest}) x
),
claim_ids as materialized (
  select d.id, left(d.id, 1) as kind, ${scopeOf('d.id')} as scope, ${nameOf('d.id')} as name, d.cap, d.period_ms
    from (select c.id, min(c.cap) as cap, min(c.period_ms) as period_ms from claim_lims c group by c.id) d
),
claim_running as materialized (
  select r.id, r.running from ${runningOf(ns, `select d.id from claim_ids d where d.kind = 'c'`)}
),
claim_state as materialized (
  select d.id, d.kind, d.scope, d.name,
         coalesce(case d.kind when 'c' then l.concurrency else l.rate_limit end, d.cap) as cap,
         coalesce(l.rate_period_ms, d.period_ms) as period_ms,
         case d.kind when 'c' then coalesce(r.running, 0)
           else coalesce(${takenSql('t.starts', 'coalesce(l.rate_period_ms, d.period_ms)')}, 0) end as used,
         coalesce(l.held_until > now(), false) as held
    from claim_ids d
    left join ${limits} l on l.scope = d.scope and l.name = d.name
    left join claim_running r on r.id = d.id
    left join ${rates} t on d.kind = 'r' and t.scope = d.scope and t.name = d.name
),
claim_fit as materialized (
  select c.mid, c.pos from claim_lims c join claim_state s on s.id = c.id
   group by c.mid, c.pos having bool_and(not s.held and c.rank <= s.cap - s.used)
),
claim_need as materialized (
  select s.scope, s.name, s.cap, s.period_ms, count(*)::int as n
    from claim_lims c join claim_fit f on f.mid = c.mid join claim_state s on s.id = c.id
   where s.kind = 'r' group by s.scope, s.name, s.cap, s.period_ms
),
claim_rate_grants as materialized (
  select g.scope, g.name, g.granted
    from (select array_agg(n.scope) as scopes, array_agg(n.name) as names, array_agg(n.cap) as caps,
                 array_agg(n.period_ms) as periods, array_agg(n.n) as wanted from claim_need n) a
   cross join lateral ${takeRatesFunction(ns)}(a.scopes, a.names, a.caps, a.periods, a.wanted) g
   where a.scopes is not null
),
claim_refused as materialized (
  select c.mid from (
    select c.mid, c.id, row_number() over (partition by c.id order by c.pos) as wrank
      from claim_lims c join claim_fit f on f.mid = c.mid where left(c.id, 1) = 'r') c
    join claim_ids d on d.id = c.id
    left join claim_rate_grants g on g.scope = d.scope and g.name = d.name
   where c.wrank > coalesce(g.granted, 0)
),
claim_picked as materialized (
  select f.mid from claim_fit f where f.mid not in (select r.mid from claim_refused r)
  union all
  select c.id from claim_candidates c
   where ${list}->0 is null
)`,
    ids: PICKED_IDS,
    more: PICKED_MORE,
  }
}

/**
 * The pick of a claim without the pre-filter when each message of the
 * worker's actors carries one limit, a concurrency limit (decision 0019):
 * the same rule as {@link pickSql} (a candidate is claimed when its rank
 * among the candidates of its limit is within the limit's room, counted
 * under the limit's lock, and its key is not held) without the general
 * pick's per-limit grouping, fitting and rate windows. A candidate of
 * another shape (more limits, or a rate, sent by a process that declares
 * more) is refused, so the claim comes back short and the next one has the
 * pre-filter and the general pick.
 *
 * Each limit's room (its stored limit, else the smallest its candidates
 * declare, less its running messages; none while its key is held) is worked
 * out once per limit, not once per candidate, and the candidates are ranked
 * by one window: 3% fewer instructions than a window for the smallest limit
 * and per-candidate joins (decision 0021).
 */
export function singleLimitPickSql(ns: Namespace): { ctes: string; ids: string; more: string } {
  const limits = table(ns, 'coordination_limits')
  const first = `c.${LIMITS}->0`
  const id = `${first}->>'id'`
  return {
    ctes: `claim_lims as materialized (
  select c.id as mid, ${id} as id, (${first}->>'limit')::int as cap,
         row_number() over (partition by ${id} order by c.pos) as rank
    from claim_candidates c
   where left(${id}, 1) = 'c' and c.${LIMITS}->1 is null
),
claim_room as materialized (
  select r.id, case when coalesce(o.held_until > now(), false) then 0
                    else coalesce(o.concurrency, r.cap) - r.running end as room
    from (select array_agg(g.id) as ids, array_agg(g.cap) as caps
            from (select l.id, min(l.cap) as cap from claim_lims l group by l.id) g offset 0) a
   cross join lateral unnest(a.ids, a.caps, ${runningFunction(ns)}(a.ids)) as r(id, cap, running)
    left join ${limits} o on o.scope = ${scopeOf('r.id')} and o.name = ${nameOf('r.id')}
),
claim_picked as materialized (
  select l.mid from claim_lims l join claim_room r on r.id = l.id
   where l.rank <= r.room
  union all
  select c.id from claim_candidates c
   where ${first} is null
)`,
    ids: PICKED_IDS,
    more: PICKED_MORE,
  }
}

/**
 * The settle clauses: a settled message with a concurrency limit frees its
 * place by leaving `consumed`, so nothing is written; `effect` wakes the
 * workers of its queue (`pg_notify` at commit): a worker whose claim came
 * back short because of limits sleeps until a place frees.
 *
 * Reads `settled (id, state, queue, options)`.
 */
export function releaseEffectSql(ns: Namespace): string {
  const channel = ns.channel('wake').replaceAll("'", "''")
  // One JSON path test per queue (its first limited message), in a subplan
  // that stops there: written as `exists`, it cost a settle of 750 rows
  // 3.5% more instructions (decision 0021).
  return `(select count(pg_notify('${channel}', q.queue)) from (select distinct s.queue from settled s) q
      where (select true from settled s where s.queue = q.queue and ${hasRunningLimitSql('s')} limit 1))`
}
