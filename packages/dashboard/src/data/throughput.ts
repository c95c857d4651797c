import type { DashboardData } from './dashboard-data.js'

/** @internal Messages finished per minute over the last hour: index 0 is the oldest minute. */
export interface Throughput {
  readonly done: readonly number[]
  readonly rejected: readonly number[]
}

/** @internal Minutes the chart covers: the current one and the 59 before it. */
export const THROUGHPUT_MINUTES = 60

/** @internal Finished rows of one queue and state in one minute. */
export interface FinishedCount {
  readonly queue: string
  readonly state: 'done' | 'rejected'
  /** The minute they finished in, in minutes since the Unix epoch (UTC). */
  readonly minute: number
  /** True for rows that finished before `settledBeforeMs`. */
  readonly settled: boolean
  readonly n: number
}

/** @internal What {@link countFinished} read, and the clock it read it at. */
export interface FinishedCounts {
  /** The instant counted up to (inclusive), in ms since the epoch. */
  readonly atMs: number
  /** The minute `atMs` falls in: the chart's last bar. */
  readonly minute: number
  /** `atMs - settleMs`, to the millisecond: rows before it are `settled`. */
  readonly settledBeforeMs: number
  readonly counts: readonly FinishedCount[]
}

/**
 * @internal Counts the done and rejected rows that finished from `sinceMs`
 * (or from the start of the chart's first minute, whichever is later) up to
 * `at` (default the database's `now()`), per queue, state and minute, with
 * each count split at `at - settleMs`. One index-only range scan of
 * `messages_finished (updated_at) include (queue, state)`: it costs the
 * entries in the range, so a caller that keeps the settled counts (the live
 * hub's `ThroughputCache`) asks only for what finished since its last read.
 *
 * Every boundary is computed by the statement from its own clock and
 * truncated to the millisecond, so `settledBeforeMs` passed back as the next
 * `sinceMs` splits the rows exactly: none is counted twice or skipped.
 */
export async function countFinished(
  data: DashboardData,
  options: { readonly sinceMs: number | null; readonly at?: Date; readonly settleMs: number },
): Promise<FinishedCounts> {
  const messages = data.ns.table('messages')
  const rows = await data.executor.query<{
    at_ms: number
    minute_now: string
    settled_before_ms: number
    queue: string | null
    state: 'done' | 'rejected' | null
    minute: string | null
    settled: boolean | null
    n: string | null
  }>(
    `with clock as (
  select date_trunc('milliseconds', coalesce($1::timestamptz, now())) as at
), bounds as (
  select at,
         date_trunc('milliseconds', at - $2::int8 * interval '1 millisecond') as settled_before,
         -- The chart's first minute: minutes are UTC minutes, whatever the session's time zone.
         date_bin('1 minute', at, timestamptz '2000-01-01 00:00:00+00')
           - interval '${THROUGHPUT_MINUTES - 1} minutes' as window_start
    from clock
), counts as (
  -- Index-only on messages_finished once vacuumed: the range from since to at.
  select queue, state,
         date_bin('1 minute', updated_at, timestamptz '2000-01-01 00:00:00+00') as minute,
         updated_at < (select settled_before from bounds) as settled,
         count(*) as n
    from ${messages}
   where state in ('done', 'rejected')
     and updated_at >= greatest($3::timestamptz, (select window_start from bounds))
     and updated_at <= (select at from bounds)
   group by 1, 2, 3, 4
)
select (extract(epoch from b.at) * 1000)::float8 as at_ms,
       (extract(epoch from date_bin('1 minute', b.at, timestamptz '2000-01-01 00:00:00+00')) / 60)::int8::text as minute_now,
       (extract(epoch from b.settled_before) * 1000)::float8 as settled_before_ms,
       c.queue, c.state, (extract(epoch from c.minute) / 60)::int8::text as minute, c.settled, c.n::text as n
  from bounds b left join counts c on true`,
    [
      options.at === undefined ? null : options.at.toISOString(),
      Math.trunc(options.settleMs),
      options.sinceMs === null ? null : new Date(options.sinceMs).toISOString(),
    ],
  )
  const first = rows[0]!
  const counts: FinishedCount[] = []
  for (const row of rows) {
    if (row.queue === null || row.state === null || row.minute === null) continue
    counts.push({
      queue: row.queue,
      state: row.state,
      minute: Number(row.minute),
      settled: row.settled === true,
      n: Number(row.n),
    })
  }
  return {
    atMs: first.at_ms,
    minute: Number(first.minute_now),
    settledBeforeMs: first.settled_before_ms,
    counts,
  }
}
