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

/** The counting function's name, qualified. */
export function runningFunction(ns: Namespace): string {
  return `${quoteIdentifier(ns.schema)}.${ns.relation('coordination_running_counts')}`
}

/**
 * The running messages of each concurrency limit id, counted after taking
 * one transaction-level advisory lock per limit, in lock-key order.
 *
 * Volatile, so the count runs with a snapshot taken after the locks: it
 * sees every claim of those limits that committed before, and a claim of
 * one of them that has not committed yet holds its lock, so this waits for
 * it. Two claims of the same limit therefore never both take its last
 * place, and claims of different limits never wait on each other.
 *
 * PL/pgSQL, so its two statements are planned once per connection, not at
 * every call as in a SQL function (about 1 ms of each claim). The count
 * reads the `consumed` rows for a message's own limit, and a second time
 * for its queue's only when a queue limit is asked for.
 *
 * `create or replace`: migration 7 replaced migration 6's text. A change to
 * it (or to the paths above) needs a new migration that replaces it again.
 */
export function runningFunctionSql(ns: Namespace): string {
  const salt = `iddqueue:${ns.key}:limit:`.replaceAll("'", "''")
  const asked = (queue: boolean) =>
    ` and exists (select from unnest(ids) as a(id) where left(a.id, 3) ${queue ? '=' : '<>'} 'cq:')`
  return `create or replace function ${runningFunction(ns)}(ids text[]) returns table (id text, running int)
language plpgsql volatile as $$
#variable_conflict use_column
begin
  perform pg_advisory_xact_lock(k.key) from (
    select distinct hashtextextended('${salt}' || i, 0) as key from unnest(ids) as i order by 1) k;
  return query select i.id, coalesce(c.n, 0) from unnest(ids) as i(id) left join (
    select r.v->>'id' as id, count(*)::int as n from (${runningLimitsSql(ns, asked)}) r
     group by 1) c on c.id = i.id;
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
 * The concurrency limits (`v`, `{ id, limit }`, or null) and start
 * (`started_at`) of the `consumed` rows: a scan per path, the second (the
 * queue's limit) with the condition `only(true)`, the first with `only(false)`.
 */
function runningLimitsSql(ns: Namespace, only: (queue: boolean) => string = () => ''): string {
  return RUNNING_PATHS.map(
    (path, i) => `select jsonb_path_query_first(m.options, '${path}') as v, m.started_at
          from ${ns.table('messages')} m
         where m.state = 'consumed'${only(i === 1)}`,
  ).join('\n        union all\n        ')
}
