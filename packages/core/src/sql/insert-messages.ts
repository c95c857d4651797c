import type { Namespace } from '@iddqueue/schema'

const SKIP_EXISTING = 'on conflict (id) do nothing'

/**
 * Inserts a batch of messages (one or up to 1,000) in one statement over
 * arrays, and, given a wake channel, sends one wake-up NOTIFY per distinct
 * queue carrying only the queue name.
 *
 * With `skipExisting`, an id that already exists is left untouched, so
 * sending the same message again stores it once. Without it, such an id
 * fails the statement with a unique violation: plain inserts are about 18%
 * faster for batches of 1,000 (an `on conflict` insert is speculative and
 * writes one more WAL record per row), so sends try them first (see
 * `enqueueEntries`).
 *
 * Parameters: ids, queues, actors, args (JSON text), options (JSON text),
 * priorities, delays in ms (null: none), etas in epoch ms (null: none), and
 * the wake channel, or null to notify nobody: a send the broker commits
 * itself wakes workers after its commit instead (see `runtime/waker.ts`),
 * since PostgreSQL serialises the commits of transactions that notified. The eta is PostgreSQL's clock plus the delay, unless an
 * absolute eta was given.
 */
export function insertMessagesSql(ns: Namespace, skipExisting: boolean): string {
  return `with inserted as (
  insert into ${ns.table('messages')} (id, queue, actor, args, options, priority, eta)
  select t.id, t.queue, t.actor, t.args::jsonb, t.options::jsonb, t.priority,
         case when t.eta_ms is not null then to_timestamp(t.eta_ms / 1000.0)
              when t.delay_ms is not null then now() + t.delay_ms * interval '1 millisecond'
              else now() end
    from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::float8[], $8::float8[])
      as t(id, queue, actor, args, options, priority, delay_ms, eta_ms)
  ${skipExisting ? SKIP_EXISTING : ''}
  returning queue
), woken as (
  select pg_notify($9, queue) from (select distinct queue from inserted) as q where $9::text is not null
)
select (select count(*) from inserted)::int as inserted, (select count(*) from woken)::int as woken`
}

/**
 * The same insert for a batch whose messages share everything but their id
 * and arguments (same actor, queue, options, priority and delay or eta), the
 * usual case: two arrays instead of eight, so less to encode and to parse.
 *
 * Parameters: ids, args (JSON text), queue, actor, options (JSON text),
 * priority, delay in ms (or null), eta in epoch ms (or null), the wake channel
 * (or null: nobody).
 */
export function insertUniformMessagesSql(ns: Namespace, skipExisting: boolean): string {
  return `with inserted as (
  insert into ${ns.table('messages')} (id, queue, actor, args, options, priority, eta)
  select t.id, $3, $4, t.args::jsonb, $5::text::jsonb, $6,
         (select case when $8::float8 is not null then to_timestamp($8::float8 / 1000.0)
                      when $7::float8 is not null then now() + $7::float8 * interval '1 millisecond'
                      else now() end)
    from unnest($1::uuid[], $2::text[]) as t(id, args)
  ${skipExisting ? SKIP_EXISTING : ''}
  returning 1
), counted as (
  select count(*)::int as n from inserted
)
select n as inserted, case when n > 0 and $9::text is not null then pg_notify($9, $3) end as woken from counted`
}

/**
 * The same insert for one message (a `send()`), with a value per column
 * instead of arrays: its plan does not depend on the values, so PostgreSQL
 * keeps one generic plan for it, where the array statements are planned
 * again for every execution (their row count is known only from the
 * arrays), and nothing is encoded as an array.
 *
 * Parameters: as {@link insertUniformMessagesSql}, with one id and one
 * argument list (JSON text) in place of the arrays.
 */
export function insertOneMessageSql(ns: Namespace, skipExisting: boolean): string {
  return `with inserted as (
  insert into ${ns.table('messages')} (id, queue, actor, args, options, priority, eta)
  values ($1::uuid, $3::text, $4::text, $2::text::jsonb, $5::text::jsonb, $6::int,
          case when $8::float8 is not null then to_timestamp($8::float8 / 1000.0)
               when $7::float8 is not null then now() + $7::float8 * interval '1 millisecond'
               else now() end)
  ${skipExisting ? SKIP_EXISTING : ''}
  returning 1
), counted as (
  select count(*)::int as n from inserted
)
select n as inserted, case when n > 0 and $9::text is not null then pg_notify($9, $3) end as woken from counted`
}
