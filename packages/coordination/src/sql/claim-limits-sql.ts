import type { Namespace } from '@iddqueue/schema'
import { table } from '../tables.js'

/** The message option holding a message's concurrency slot: `{ scope, name, limit }`. */
const SLOT = `options->'concurrency'`

/**
 * The `with` clause of a limited claim: the slots saturated or held at the
 * claim's snapshot, so the ready probes step over their rows (no
 * head-of-line blocking). Only a pre-filter: the grant below is what is strict.
 */
export function saturatedSql(ns: Namespace): string {
  const running = table(ns, 'coordination_running')
  const limits = table(ns, 'coordination_limits')
  return `claim_saturated as materialized (
  select k.scope, k.name from ${running} k
    left join ${limits} l on l.scope = k.scope and l.name = k.name
   where k.running >= coalesce(l.concurrency, k.cap)
  union
  select l.scope, l.name from ${limits} l where l.held_until > now()
)`
}

/** The `eligible` clause: a ready row `r` whose slot is not saturated or held. */
export const eligibleSql = `r.${SLOT} is null or not exists (
  select 1 from claim_saturated s where s.scope = r.${SLOT}->>'scope' and s.name = r.${SLOT}->>'name')`

/**
 * The claim's pick (decision 0012), over `claim_candidates (id, options,
 * pos)` of `overfetch` times the batch: each candidate ranked within its
 * slot, the batch taken round-robin by rank (rank 1 of every slot, then
 * rank 2, ...) among the ranks the slot had free at the snapshot, then one
 * guarded increment per slot, in slot order, on its counter row: an
 * `insert ... on conflict do update ... where running < cap` re-reads the
 * latest committed row (waiting for a concurrent claim of the same slot), so
 * two claims can never both take a slot's last place. A candidate is
 * claimed when its rank is within what its slot granted.
 */
export function pickSql(
  ns: Namespace,
  overfetch: number,
): { ctes: string; ids: string; more: string } {
  const running = table(ns, 'coordination_running')
  const limits = table(ns, 'coordination_limits')
  const batch = `($2::int / ${overfetch})`
  return {
    ctes: `claim_ranked as materialized (
  select c.id, c.pos, c.${SLOT}->>'scope' as scope, c.${SLOT}->>'name' as name,
         coalesce(l.concurrency, (c.${SLOT}->>'limit')::int) as cap,
         coalesce(k.running, 0) as running,
         coalesce(l.held_until > now(), false) as held,
         row_number() over (partition by c.${SLOT}->>'scope', c.${SLOT}->>'name' order by c.pos) as rank
    from claim_candidates c
    left join ${limits} l on l.scope = c.${SLOT}->>'scope' and l.name = c.${SLOT}->>'name'
    left join ${running} k on k.scope = c.${SLOT}->>'scope' and k.name = c.${SLOT}->>'name'
),
claim_wanted as materialized (
  select w.id, w.pos, w.scope, w.name, w.cap, w.rank from claim_ranked w
   where w.scope is null or (not w.held and w.rank <= w.cap - w.running)
   order by w.rank, w.pos limit ${batch}
),
claim_grants as (
  insert into ${running} as k (scope, name, running, cap, granted)
  select w.scope, w.name, count(*)::int, min(w.cap), count(*)::int from claim_wanted w
   where w.scope is not null group by w.scope, w.name order by w.scope, w.name
  on conflict (scope, name) do update
     set running = k.running + least(excluded.granted, excluded.cap - k.running),
         granted = least(excluded.granted, excluded.cap - k.running),
         cap = excluded.cap, updated_at = now()
   where k.running < excluded.cap
  returning k.scope, k.name, k.granted
)`,
    ids: `select w.id from claim_wanted w
    left join claim_grants g on g.scope = w.scope and g.name = w.name
   where w.scope is null or w.rank <= g.granted`,
    more: `((select count(*) from claim_ranked w
    where w.scope is null or (not w.held and w.rank <= w.cap - w.running)) > ${batch})`,
  }
}

/**
 * Frees the slots of settled messages, in the settle transaction: the
 * counter rows are locked in slot order first (as claims lock them), so a
 * settle and a claim never deadlock.
 *
 * Then wakes the workers of the queues (`pg_notify` at commit): a worker
 * whose claim came back short because of limits sleeps until a slot frees.
 *
 * Parameters: scopes (`text[]`), names (`text[]`), one per settled message;
 * the wake channel; the queues (`text[]`).
 */
export function releaseSlotsSql(ns: Namespace): string {
  const running = table(ns, 'coordination_running')
  return `with d as (
  select scope, name, count(*)::int as n from unnest($1::text[], $2::text[]) as x(scope, name) group by scope, name
), locked as materialized (
  select k.scope, k.name from ${running} k join d on d.scope = k.scope and d.name = k.name
   order by k.scope, k.name for update of k
), released as (
  update ${running} k set running = greatest(k.running - d.n, 0), updated_at = now()
    from d where k.scope = d.scope and k.name = d.name
     and (k.scope, k.name) in (select scope, name from locked)
  returning 1
)
select (select count(*) from released)::int as released,
       (select count(pg_notify($3, q)) from unnest($4::text[]) as q)::int as woken`
}

/** Running messages per slot, counted from the `consumed` rows. */
function consumedSql(ns: Namespace): string {
  return `select ${SLOT}->>'scope' as scope, ${SLOT}->>'name' as name, count(*)::int as n
    from ${ns.table('messages')} where state = 'consumed' and ${SLOT} is not null group by 1, 2`
}

/**
 * The counters that disagree with the `consumed` rows (a crashed worker's
 * messages recovered, rows handed back outside a settle). Claims and settles
 * change both in one transaction, so in one snapshot they agree otherwise.
 */
export function driftSql(ns: Namespace): string {
  return `select k.scope, k.name from ${table(ns, 'coordination_running')} k
  left join (${consumedSql(ns)}) a on a.scope = k.scope and a.name = k.name
 where k.running <> coalesce(a.n, 0)`
}

/**
 * Locks counter rows in slot order (claims and settles of those slots wait).
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
 * after the locks: its snapshot sees every claim and settle of those slots.
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
