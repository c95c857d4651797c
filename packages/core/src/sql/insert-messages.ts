import type { Namespace } from '@iddqueue/schema'

/**
 * Inserts a batch of messages (one or up to 1,000) in one statement over
 * arrays, and sends one wake-up NOTIFY per distinct queue carrying only the
 * queue name. An id that already exists is left untouched (re-sending the
 * same message is idempotent).
 *
 * Parameters: ids, queues, actors, args (JSON text), options (JSON text),
 * priorities, delays in ms (null: none), etas in epoch ms (null: none), and
 * the wake channel. The eta is PostgreSQL's clock plus the delay, unless an
 * absolute eta was given.
 */
export function insertMessagesSql(ns: Namespace): string {
  return `with inserted as (
  insert into ${ns.table('messages')} (id, queue, actor, args, options, priority, eta)
  select t.id, t.queue, t.actor, t.args::jsonb, t.options::jsonb, t.priority,
         case when t.eta_ms is not null then to_timestamp(t.eta_ms / 1000.0)
              when t.delay_ms is not null then now() + t.delay_ms * interval '1 millisecond'
              else now() end
    from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::float8[], $8::float8[])
      as t(id, queue, actor, args, options, priority, delay_ms, eta_ms)
  on conflict (id) do nothing
  returning queue
), woken as (
  select pg_notify($9, queue) from (select distinct queue from inserted) as q
)
select (select count(*) from inserted)::int as inserted, (select count(*) from woken)::int as woken`
}
