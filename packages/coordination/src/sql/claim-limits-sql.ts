import type { Namespace } from '@iddqueue/schema'
import { table } from '../tables.js'

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
function scopeOf(id: string): string {
  return `(case substr(${id}, 2, 1) when 'k' then 'key' when 'a' then 'actor' else 'queue' end)`
}
function nameOf(id: string): string {
  return `substr(${id}, 4)`
}

/** Places of a rate window taken within the period before the claim's `now()`. */
function takenSql(starts: string, periodMs: string): string {
  return `(select count(*)::int from unnest(${starts}) s where s > now() - ${periodMs} * interval '1 millisecond')`
}

/**
 * The `with` clause of a limited claim: the ids of the limits saturated
 * (concurrency at its cap, a rate window full) or held (`RateLimited` key)
 * at the claim's snapshot, so the ready probes step over their rows (no
 * head-of-line blocking). Only a pre-filter: the grants below are what is
 * strict.
 */
export function saturatedSql(ns: Namespace): string {
  const running = table(ns, 'coordination_running')
  const rates = table(ns, 'coordination_rates')
  const limits = table(ns, 'coordination_limits')
  const prefix = (kind: string, scope: string) =>
    `'${kind}' || left(${scope}, 1) || ':' || ${`${scope.split('.')[0]}.name`}`
  return `claim_saturated(id) as materialized (
  select ${prefix('c', 'k.scope')} from ${running} k
    left join ${limits} l on l.scope = k.scope and l.name = k.name
   where k.running >= coalesce(l.concurrency, k.cap)
  union all
  select ${prefix('r', 't.scope')} from ${rates} t
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

/**
 * The claim's pick (decisions 0012 and 0014), over `claim_candidates (id,
 * options, pos)` of `overfetch` times the batch:
 *
 * 1. each candidate's limits, each ranked among the candidates of that
 *    limit, with what the limit had free at the snapshot;
 * 2. the candidates all of whose limits have room for their rank, taken
 *    round-robin by the rank in their first limit (rank 1 of every key,
 *    then rank 2, ...), up to the batch;
 * 3. one guarded upsert per limit, in id order: a concurrency counter
 *    (`running < cap`), a rate window (places taken within the period);
 *    an `insert ... on conflict do update` re-reads the latest committed
 *    row (waiting for a concurrent claim of the same limit), so two claims
 *    can never both take a limit's last place;
 * 4. a candidate is claimed when, in each of its limits, its rank among
 *    the wanted rows is within what that limit granted.
 *
 * A candidate granted by one limit and refused by another (a concurrent
 * claim took the other's place) leaves a concurrency place counted but
 * unused until the broker's reconciliation (a second), or a rate place
 * unused: never a place too many.
 */
export function pickSql(
  ns: Namespace,
  overfetch: number,
): { ctes: string; ids: string; more: string } {
  const running = table(ns, 'coordination_running')
  const rates = table(ns, 'coordination_rates')
  const limits = table(ns, 'coordination_limits')
  const batch = `($2::int / ${overfetch})`
  const fits = `(c.id is null or (not c.held and c.rank <= c.cap - c.used))`
  return {
    ctes: `claim_lims as materialized (
  select c.id as mid, c.pos, e.ord, e.v->>'id' as id, left(e.v->>'id', 1) as kind,
         ${scopeOf(`(e.v->>'id')`)} as scope, ${nameOf(`(e.v->>'id')`)} as name,
         coalesce(case left(e.v->>'id', 1) when 'c' then l.concurrency else l.rate_limit end,
                  (e.v->>'limit')::int) as cap,
         coalesce(l.rate_period_ms, (e.v->>'periodMs')::bigint) as period_ms,
         case left(e.v->>'id', 1)
           when 'c' then coalesce(k.running, 0)
           else coalesce(${takenSql('t.starts', `coalesce(l.rate_period_ms, (e.v->>'periodMs')::bigint)`)}, 0)
         end as used,
         coalesce(l.held_until > now(), false) as held,
         row_number() over (partition by e.v->>'id' order by c.pos) as rank
    from claim_candidates c
    -- A fixed list of places, not jsonb_array_elements: its estimate of 100 rows per
    -- candidate made the plan's cost cross jit_above_cost, and JIT compiling every
    -- claim cost ten times the claim itself (measured: 1,040 ms vs 66 ms per claim).
    left join lateral (
      select p.ord, c.${LIMITS}->(p.ord::int - 1) as v
        from (values ${Array.from({ length: MAX_LIMITS }, (_, i) => `(${i + 1})`).join(', ')}) p(ord)
       where c.${LIMITS}->(p.ord::int - 1) is not null) e on true
    left join ${limits} l
      on l.scope = ${scopeOf(`(e.v->>'id')`)} and l.name = ${nameOf(`(e.v->>'id')`)}
    left join ${running} k
      on left(e.v->>'id', 1) = 'c' and k.scope = ${scopeOf(`(e.v->>'id')`)} and k.name = ${nameOf(`(e.v->>'id')`)}
    left join ${rates} t
      on left(e.v->>'id', 1) = 'r' and t.scope = ${scopeOf(`(e.v->>'id')`)} and t.name = ${nameOf(`(e.v->>'id')`)}
),
claim_fit as materialized (
  select c.mid, c.pos, max(c.rank) filter (where c.ord is null or c.ord = 1) as rank
    from claim_lims c group by c.mid, c.pos having bool_and(${fits})
),
claim_wanted as materialized (
  select f.mid, f.pos from claim_fit f order by f.rank, f.pos limit ${batch}
),
claim_need as materialized (
  select c.kind, c.scope, c.name, min(c.cap) as cap, min(c.period_ms) as period_ms, count(*)::int as n
    from claim_lims c join claim_wanted w on w.mid = c.mid
   where c.id is not null group by c.kind, c.scope, c.name
),
claim_slot_grants as (
  insert into ${running} as k (scope, name, running, cap, granted)
  select n.scope, n.name, n.n, n.cap, n.n from claim_need n
   where n.kind = 'c' order by n.scope, n.name
  on conflict (scope, name) do update
     set running = k.running + least(excluded.granted, excluded.cap - k.running),
         granted = least(excluded.granted, excluded.cap - k.running),
         cap = excluded.cap, updated_at = now()
   where k.running < excluded.cap
  returning 'c'::text as kind, k.scope, k.name, k.granted
),
claim_rate_grants as (
  insert into ${rates} as t (scope, name, starts, cap, period_ms, granted)
  select n.scope, n.name, array_fill(now(), array[least(n.n, n.cap)]), n.cap, n.period_ms, least(n.n, n.cap)
    from claim_need n
   where n.kind = 'r' order by n.scope, n.name
  on conflict (scope, name) do update
     set (starts, granted, cap, period_ms, updated_at) = (
       select array(select s from unnest(t.starts || array_fill(now(), array[g.n])) with ordinality u(s, i)
                     order by s desc, i desc limit greatest(excluded.cap, ${takenSql('t.starts', 'excluded.period_ms')} + g.n)),
              g.n, excluded.cap, excluded.period_ms, now()
         from (select greatest(least(excluded.granted,
                 excluded.cap - ${takenSql('t.starts', 'excluded.period_ms')}), 0) as n) g)
  returning 'r'::text as kind, t.scope, t.name, t.granted
),
claim_granted as materialized (
  select c.mid, bool_and(c.id is null or c.wrank <= coalesce(g.granted, 0)) as ok
    from (select c.*, row_number() over (partition by c.id order by c.pos) as wrank
            from claim_lims c join claim_wanted w on w.mid = c.mid) c
    left join (select * from claim_slot_grants union all select * from claim_rate_grants) g
      on g.kind = c.kind and g.scope = c.scope and g.name = c.name
   group by c.mid
)`,
    ids: `select g.mid from claim_granted g where g.ok`,
    more: `((select count(*) from claim_fit) > ${batch})`,
  }
}

/**
 * The settle clauses (decision 0016): free the concurrency places of the
 * settled messages in the settle statement itself. The counter rows are
 * locked in order first (as claims lock them), so a settle and a claim
 * never deadlock; then `effect` wakes the workers of their queues
 * (`pg_notify` at commit): a worker whose claim came back short because of
 * limits sleeps until a place frees.
 *
 * Reads `settled (id, state, queue, options)`.
 */
export function releaseClauses(ns: Namespace): { ctes: string; effect: string } {
  const running = table(ns, 'coordination_running')
  const id = `(e.v->>'id')`
  return {
    ctes: `claim_freed as (
  select ${scopeOf(id)} as scope, ${nameOf(id)} as name, count(*)::int as n,
         min((e.v->>'limit')::int) as cap
    from settled s cross join lateral (
      select s.${LIMITS}->(p.ord - 1) as v
        from (values ${Array.from({ length: MAX_LIMITS }, (_, i) => `(${i + 1})`).join(', ')}) p(ord)) e
   where left(${id}, 1) = 'c' group by 1, 2
), claim_released as (
  -- An upsert fed in (scope, name) order locks the counters in that order, as
  -- claims do, so a settle and a claim never deadlock; one index probe per
  -- counter. The row exists (its claim made it); if not, it is made empty.
  -- \`granted\` carries the places freed into \`excluded\` (a claim sets its own).
  insert into ${running} as k (scope, name, running, cap, granted)
  select d.scope, d.name, 0, d.cap, d.n from claim_freed d order by d.scope, d.name
  on conflict (scope, name) do update
     set running = greatest(k.running - excluded.granted, 0), updated_at = now()
  returning 1
)`,
    effect: `(select count(pg_notify('${ns.channel('wake').replaceAll("'", "''")}', q.queue)) from (
      select distinct s.queue from settled s
       where exists (select 1 from jsonb_array_elements(s.${LIMITS}) l(v) where left(l.v->>'id', 1) = 'c')) q)`,
  }
}

/** Running messages per concurrency limit, counted from the `consumed` rows. */
function consumedSql(ns: Namespace): string {
  const id = `(e.v->>'id')`
  return `select ${scopeOf(id)} as scope, ${nameOf(id)} as name, count(*)::int as n
    from ${ns.table('messages')} m cross join lateral jsonb_array_elements(m.${LIMITS}) e(v)
   where m.state = 'consumed' and m.${LIMITS} is not null and left(${id}, 1) = 'c' group by 1, 2`
}

/**
 * The counters that disagree with the `consumed` rows (a crashed worker's
 * messages recovered, rows handed back outside a settle, a place granted
 * by one limit to a row another refused). Claims and settles change both
 * in one transaction, so in one snapshot they agree otherwise.
 */
export function driftSql(ns: Namespace): string {
  return `select k.scope, k.name from ${table(ns, 'coordination_running')} k
  left join (${consumedSql(ns)}) a on a.scope = k.scope and a.name = k.name
 where k.running <> coalesce(a.n, 0)`
}

/**
 * Locks counter rows in order (claims and settles of those limits wait).
 *
 * Parameters: scopes, names.
 */
export function lockSlotsSql(ns: Namespace): string {
  return `select k.scope from ${table(ns, 'coordination_running')} k
  join unnest($1::text[], $2::text[]) as x(scope, name) on x.scope = k.scope and x.name = k.name
 order by k.scope, k.name for update of k`
}

/**
 * Rebuilds locked counters from the `consumed` rows, in a statement started
 * after the locks: its snapshot sees every claim and settle of those limits.
 *
 * Parameters: scopes, names.
 */
export function rebuildSlotsSql(ns: Namespace): string {
  const running = table(ns, 'coordination_running')
  return `update ${running} k set running = coalesce(a.n, 0), updated_at = now()
  from unnest($1::text[], $2::text[]) as x(scope, name)
  left join (${consumedSql(ns)}) a on a.scope = x.scope and a.name = x.name
 where k.scope = x.scope and k.name = x.name`
}
