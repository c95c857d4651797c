import type { Namespace } from '@iddqueue/schema'

/**
 * @internal Table blocks the `estimate` mode of `queueStats()` reads for the
 * done and cancelled totals: 4 MB at the default 8 kB block size, whatever
 * the table holds. A table this small or smaller is read whole (exact).
 */
export const SAMPLE_BLOCKS = 500

/**
 * @internal The statement of `queueStats(source, { retained: 'estimate' })`:
 * one round trip, four parts, each costing what it reads and never the
 * retention:
 *
 * - queued rows (counts, ready, scheduled) from `messages_ready`, index-only
 *   once vacuumed, and the oldest ready one from the few rows whose eta can
 *   make it the oldest; consumed rows through `messages_consumed`;
 * - rejected rows from `messages_rejected (queue, id)`, exact;
 * - done in the last minute and hour from `messages_finished (updated_at)`,
 *   exact (its cost follows the throughput, not the retention), or nothing
 *   at all without `lastHour` (both read 0);
 * - done and cancelled totals from a block sample of at most
 *   {@link SAMPLE_BLOCKS} blocks (`TABLESAMPLE SYSTEM`, a fixed seed so the
 *   figure does not jitter between reads), scaled by the sampled fraction;
 *   `sample_percent` is 100 when the table was read whole, and
 *   `sampled_fraction` is the share of the table's blocks the sample held
 *   rows from, the figure the counts are scaled by.
 *
 * With `oneQueue`, `$1` is the queue and every part reads that queue only.
 */
export function sampledStatsSql(ns: Namespace, oneQueue: boolean, lastHour = true): string {
  const messages = ns.table('messages')
  const queue = oneQueue ? 'queue = $1::text' : 'true'
  return `with sample as (
  select blocks, least(100, 100.0 * ${SAMPLE_BLOCKS} / greatest(1, blocks))::float8 as percent
    from (select pg_relation_size('${messages.replaceAll("'", "''")}'::regclass) / current_setting('block_size')::int as blocks) b
), queued as (
  -- Index-only on messages_ready (queue, priority, eta, id) once vacuumed.
  select queue,
         count(*) as queued,
         count(*) filter (where eta <= now()) as ready,
         count(*) filter (where eta > now()) as scheduled,
         min(eta) filter (where eta <= now()) as min_eta
    from ${messages}
   where state = 'queued' and ${queue}
   group by queue
), consumed as (
  select queue, count(*) as consumed, count(*) filter (where eta > now()) as scheduled
    from ${messages}
   where state = 'consumed' and ${queue}
   group by queue
), oldest as materialized (
  -- The oldest ready message is the least greatest(eta, updated_at). The row
  -- with the least eta bounds it from above, and no row whose eta is past that
  -- bound can beat it: only those rows are read from the heap, the rest of the
  -- backlog is skipped inside the index.
  select q.queue,
         (select min(greatest(m.eta, m.updated_at)) from ${messages} m
           where m.state = 'queued' and m.queue = q.queue and m.eta <= now()
             and m.eta <= (select greatest(x.eta, x.updated_at) from ${messages} x
                            where x.state = 'queued' and x.queue = q.queue and x.eta = q.min_eta
                            limit 1)) as oldest
    from queued q
   where q.min_eta is not null
), rejected as (
  select queue, count(*) as rejected from ${messages}
   where state = 'rejected' and ${queue} group by queue
), recent as (
  select queue,
         count(*) filter (where updated_at > now() - interval '1 minute') as done_minute,
         count(*) as done_hour
    from ${messages}
   where ${lastHour ? '' : 'false and '}state = 'done' and updated_at > now() - interval '1 hour' and ${queue}
   group by queue
), sampled_rows as (
  select queue, state, (ctid::text::point)[0] as block
    from ${messages} tablesample system ((select percent from sample)) repeatable (0)
), sampled as (
  select queue,
         count(*) filter (where state = 'done') as done,
         count(*) filter (where state = 'cancelled') as cancelled
    from sampled_rows
   where state in ('done', 'cancelled') and ${queue}
   group by queue
)
select queue,
       coalesce(queued.queued, 0)::text as queued, coalesce(consumed.consumed, 0)::text as consumed,
       coalesce(sampled.done, 0)::text as done, coalesce(rejected.rejected, 0)::text as rejected,
       coalesce(sampled.cancelled, 0)::text as cancelled,
       coalesce(queued.ready, 0)::text as ready,
       (coalesce(queued.scheduled, 0) + coalesce(consumed.scheduled, 0))::text as scheduled,
       (extract(epoch from now() - oldest.oldest) * 1000)::float8 as oldest_ready_ms,
       coalesce(recent.done_minute, 0)::text as done_minute, coalesce(recent.done_hour, 0)::text as done_hour,
       (select percent from sample) as sample_percent,
       -- The blocks read, as a fraction of the table's: a ratio estimator, steadier than the percentage asked for.
       (select count(distinct block) from sampled_rows)::float8 / greatest(1, (select blocks from sample)) as sampled_fraction
  from queued
  full join consumed using (queue)
  left join oldest using (queue)
  full join rejected using (queue)
  full join recent using (queue)
  full join sampled using (queue)
 order by queue`
}
