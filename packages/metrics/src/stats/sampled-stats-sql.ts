import type { Namespace } from '@iddqueue/schema'

/**
 * @internal Table blocks the `estimate` mode of `queueStats()` reads for the
 * done and cancelled totals: 8 MB at the default 8 kB block size, whatever
 * the table holds. A table this small or smaller is read whole (exact).
 */
export const SAMPLE_BLOCKS = 1000

/**
 * @internal The statement of `queueStats(source, { retained: 'estimate' })`:
 * one round trip, four parts, each costing what it reads and never the
 * retention:
 *
 * - queued and consumed rows (ready, scheduled, oldest ready) through the
 *   partial indexes `messages_ready` and `messages_consumed`;
 * - rejected rows from `messages_rejected (queue, id)`, exact;
 * - done in the last minute and hour from `messages_finished (updated_at)`,
 *   exact (its cost follows the throughput, not the retention);
 * - done and cancelled totals from a block sample of at most
 *   {@link SAMPLE_BLOCKS} blocks (`TABLESAMPLE SYSTEM`, a fixed seed so the
 *   figure does not jitter between reads), scaled by the sampled fraction;
 *   `sample_percent` is 100 when the table was read whole, and
 *   `sampled_fraction` is the share of the table's blocks the sample held
 *   rows from, the figure the counts are scaled by.
 *
 * With `oneQueue`, `$1` is the queue and every part reads that queue only.
 */
export function sampledStatsSql(ns: Namespace, oneQueue: boolean): string {
  const messages = ns.table('messages')
  const queue = oneQueue ? 'queue = $1::text' : 'true'
  return `with sample as (
  select blocks, least(100, 100.0 * ${SAMPLE_BLOCKS} / greatest(1, blocks))::float8 as percent
    from (select pg_relation_size('${messages.replaceAll("'", "''")}'::regclass) / current_setting('block_size')::int as blocks) b
), live as (
  select queue,
         count(*) filter (where state = 'queued') as queued,
         count(*) filter (where state = 'consumed') as consumed,
         count(*) filter (where state = 'queued' and eta <= now()) as ready,
         count(*) filter (where eta > now()) as scheduled,
         (extract(epoch from now() - min(greatest(eta, updated_at))
            filter (where state = 'queued' and eta <= now())) * 1000)::float8 as oldest_ready_ms
    from ${messages}
   where (state = 'queued' or state = 'consumed') and ${queue}
   group by queue
), rejected as (
  select queue, count(*) as rejected from ${messages}
   where state = 'rejected' and ${queue} group by queue
), recent as (
  select queue,
         count(*) filter (where updated_at > now() - interval '1 minute') as done_minute,
         count(*) as done_hour
    from ${messages}
   where state = 'done' and updated_at > now() - interval '1 hour' and ${queue}
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
       coalesce(live.queued, 0)::text as queued, coalesce(live.consumed, 0)::text as consumed,
       coalesce(sampled.done, 0)::text as done, coalesce(rejected.rejected, 0)::text as rejected,
       coalesce(sampled.cancelled, 0)::text as cancelled,
       coalesce(live.ready, 0)::text as ready, coalesce(live.scheduled, 0)::text as scheduled,
       live.oldest_ready_ms,
       coalesce(recent.done_minute, 0)::text as done_minute, coalesce(recent.done_hour, 0)::text as done_hour,
       (select percent from sample) as sample_percent,
       -- The blocks read, as a fraction of the table's: a ratio estimator, steadier than the percentage asked for.
       (select count(distinct block) from sampled_rows)::float8 / greatest(1, (select blocks from sample)) as sampled_fraction
  from live
  full join rejected using (queue)
  full join recent using (queue)
  full join sampled using (queue)
 order by queue`
}
