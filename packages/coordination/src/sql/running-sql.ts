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
 * Migration 9 replaces migration 8's text (decision 0021): a message with
 * one limit has its id read with three arrow operators and no test (its
 * only limit is its own, or one no claim counts), and the locks are taken
 * without removing duplicate keys (the ids are distinct, and a transaction
 * may take the same lock twice). A change to it (or to the paths above)
 * needs a new migration; the released migrations' checksums are pinned by
 * a test.
 */
export function runningFunctionSql(ns: Namespace): string {
  const messages = ns.table('messages')
  // A message's own limit: its only one (a rate or a queue limit counts
  // under an id no claim asks for, and the queue scan below skips such a
  // message), else its first when that is a keyed or actor-wide
  // concurrency limit, else the JSON path's first match.
  const own = `case when m.options->'limits'->1 is null then m.options->'limits'->0->>'id'
                    when left(m.options->'limits'->0->>'id', 3) in ('ck:', 'ca:') then m.options->'limits'->0->>'id'
                    else jsonb_path_query_first(m.options, '${RUNNING_PATHS[0]}')->>'id' end`
  const queueScan = `
        union all
        select jsonb_path_query_first(m.options, '${RUNNING_PATHS[1]}')->>'id', null
          from ${messages} m
         where m.state = 'consumed' and m.options->'limits'->1 is not null`
  const count = (queue: boolean) => `array(select g.n from (
      select min(x.at) as at, (count(*) filter (where x.at is null))::int as n from (
        select i.id, i.at from unnest(ids) with ordinality as i(id, at)
        union all
        select ${own}, null
          from ${messages} m
         where m.state = 'consumed'${queue ? queueScan : ''}) x
       group by x.id) g
     where g.at is not null order by g.at)`
  return runningFunctionText(ns, { replace: true, distinctKeys: false, count })
}

/**
 * The text of a version of {@link runningFunctionSql}: what a count does
 * around `count` (the array for ids with or without a queue limit), shared
 * by migration 8's text as released (`create`, keys made distinct before
 * locking) and migration 9's (`create or replace`, no distinct step).
 */
export function runningFunctionText(
  ns: Namespace,
  options: { replace: boolean; distinctKeys: boolean; count: (queue: boolean) => string },
): string {
  const salt = `iddqueue:${ns.key}:limit:`.replaceAll("'", "''")
  return `create ${options.replace ? 'or replace ' : ''}function ${runningFunction(ns)}(ids text[]) returns int[]
language plpgsql volatile as $$
declare
  running int[];
begin
  if coalesce(cardinality(ids), 0) = 0 then
    return '{}';
  end if;
  perform pg_advisory_xact_lock(k.key) from (
    select ${options.distinctKeys ? 'distinct ' : ''}hashtextextended('${salt}' || i, 0) as key from unnest(ids) as i order by 1) k;
  if exists (select from unnest(ids) as i where left(i, 3) = 'cq:') then
    running := ${options.count(true)};
  else
    running := ${options.count(false)};
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
 * (`cap`) and the latest start among them. A row's own limit is its first
 * when that is one (the plugin sends the most specific first: a keyed or
 * actor-wide concurrency limit, unless a keyed rate comes before it), else
 * the first the JSON path finds: the same limit, read with arrow operators
 * where they can (decision 0020); its queue's is read by a second scan.
 */
export function runningCountsSql(ns: Namespace): string {
  const first = `m.options->'limits'->0`
  const scan = (limit: string) => `select ${limit} as v, m.started_at
          from ${ns.table('messages')} m
         where m.state = 'consumed'`
  return `select r.v->>'id' as id, count(*)::int as n, min((r.v->>'limit')::int) as cap,
         max(r.started_at) as started_at
    from (${scan(`case when left(${first}->>'id', 3) in ('ck:', 'ca:') then ${first}
           else jsonb_path_query_first(m.options, '${RUNNING_PATHS[0]}') end`)}
        union all
        ${scan(`jsonb_path_query_first(m.options, '${RUNNING_PATHS[1]}')`)}) r
   group by 1 having r.v->>'id' is not null`
}
