import { type Namespace, quoteIdentifier } from '@iddqueue/schema'

/**
 * The two concurrency limits a message can count against (decision 0018):
 * its own (`ck:` a key, or `ca:` its actor, never both) and its queue's
 * (`cq:`), read from `options.limits`.
 */
const RUNNING_PATHS = [
  `$.limits[*] ? (@.id starts with "ck:" || @.id starts with "ca:")`,
  `$.limits[*] ? (@.id starts with "cq:")`,
] as const

/**
 * A `consumed` row `m`'s own concurrency limit (`{ id, limit }`, or null),
 * then `tail` (`->>'id'` for its id): its first limit when that is one, as
 * the plugin sends the most specific first (a keyed or actor-wide
 * concurrency limit, unless a keyed rate comes before it), else the first
 * that the JSON path finds. The same limit either way, since the path's
 * first match is the first element when that element matches; the arrow
 * operators cost a fraction of the path's filter (decision 0020).
 */
function ownLimitSql(tail = ''): string {
  return `case when left(m.options->'limits'->0->>'id', 3) in ('ck:', 'ca:') then m.options->'limits'->0${tail}
           else jsonb_path_query_first(m.options, '${RUNNING_PATHS[0]}')${tail} end`
}

/** Whether the message `alias` counts against a concurrency limit. */
export function hasRunningLimitSql(alias: string): string {
  return `jsonb_path_exists(${alias}.options, '$.limits[*] ? (@.id starts with "c")')`
}

/** The counting function's name, qualified (decision 0020). */
export function runningFunction(ns: Namespace): string {
  return `${quoteIdentifier(ns.schema)}.${ns.relation('coordination_running')}`
}

/**
 * A `from` item with a row `r (id, running)` per concurrency limit id that
 * `ids` (an SQL query of text ids, each once) selects: its running
 * messages, counted by {@link runningFunctionSql} under the limits' locks.
 */
export function runningOf(ns: Namespace, ids: string): string {
  // offset 0: the array is built once, not once per reference to a.ids.
  return `(select array(${ids}) as ids offset 0) a cross join lateral unnest(a.ids, ${runningFunction(ns)}(a.ids)) as r(id, running)`
}

/**
 * The running messages of each concurrency limit id, in the order of
 * `ids`, counted after taking one transaction-level advisory lock per
 * limit, in lock-key order.
 *
 * Volatile, so the count runs with a snapshot taken after the locks: it
 * sees every claim of those limits that committed before, and a claim of
 * one of them that has not committed yet holds its lock, so this waits for
 * it. Two claims of the same limit therefore never both take its last
 * place, and claims of different limits never wait on each other. The
 * locks are those of `coordination_running_counts` (migrations 6 and 7),
 * which stays for workers of earlier versions: during a rolling upgrade
 * both kinds of claim wait on each other.
 *
 * PL/pgSQL, so its statements are planned once per connection, not at
 * every call as in a SQL function (about 1 ms of each claim). It returns an
 * array, not a set, which the claim reads without a tuplestore, and counts
 * in one aggregate over the ids asked and the `consumed` rows' limits
 * together: a join of the two was planned as a nested loop when the
 * statistics said no row was `consumed` (5 ms for 425 ids; decision 0020).
 * The count reads the `consumed` rows for a message's own limit, and a
 * second time for its queue's only when a queue limit is asked for: two
 * statements, so that the usual one has no second scan to skip. `ids` must
 * be distinct: a repeated one is refused, never counted as zero.
 *
 * Migration 8. A change to it (or to the paths above) needs a new
 * migration that replaces it; the released migrations' checksums are
 * pinned by a test.
 */
export function runningFunctionSql(ns: Namespace): string {
  const salt = `iddqueue:${ns.key}:limit:`.replaceAll("'", "''")
  const count = (queue: boolean) => `array(select g.n from (
      select min(x.at) as at, (count(*) filter (where x.at is null))::int as n from (
        select i.id, i.at from unnest(ids) with ordinality as i(id, at)
        union all
        select r.id, null from (${runningLimitsSql(ns, { queue, idsOnly: true })}) r) x
       group by x.id) g
     where g.at is not null order by g.at)`
  return `create function ${runningFunction(ns)}(ids text[]) returns int[]
language plpgsql volatile as $$
declare
  running int[];
begin
  if coalesce(cardinality(ids), 0) = 0 then
    return '{}';
  end if;
  perform pg_advisory_xact_lock(k.key) from (
    select distinct hashtextextended('${salt}' || i, 0) as key from unnest(ids) as i order by 1) k;
  if exists (select from unnest(ids) as i where left(i, 3) = 'cq:') then
    running := ${count(true)};
  else
    running := ${count(false)};
  end if;
  if cardinality(running) is distinct from cardinality(ids) then
    raise exception 'coordination_running: the limit ids must be distinct' using errcode = '22023';
  end if;
  return running;
end
$$`
}

/**
 * The concurrency limits with running messages: `id`, the messages running
 * (`n`, from the `consumed` rows), the smallest limit they declare
 * (`cap`) and the latest start among them.
 */
export function runningCountsSql(ns: Namespace): string {
  return `select r.v->>'id' as id, count(*)::int as n, min((r.v->>'limit')::int) as cap,
         max(r.started_at) as started_at
    from (${runningLimitsSql(ns)}) r
   group by 1 having r.v->>'id' is not null`
}

/**
 * The concurrency limits of the `consumed` rows: a scan for each row's own
 * limit and, with `queue`, one for its queue's. Each row has `v` (`{ id,
 * limit }`, or null) and `started_at`, or with `idsOnly` only `id`: the
 * count groups by the id read in the scan, since grouping by a field of
 * the limit objects cost it more than reading them (decision 0020).
 */
function runningLimitsSql(
  ns: Namespace,
  { queue = true, idsOnly = false }: { queue?: boolean; idsOnly?: boolean } = {},
): string {
  const tail = idsOnly ? "->>'id'" : ''
  const limits = [ownLimitSql(tail)]
  if (queue) limits.push(`jsonb_path_query_first(m.options, '${RUNNING_PATHS[1]}')${tail}`)
  return limits
    .map(
      (limit) => `select ${idsOnly ? `${limit} as id` : `${limit} as v, m.started_at`}
          from ${ns.table('messages')} m
         where m.state = 'consumed'`,
    )
    .join('\n        union all\n        ')
}
