import { assertQueueName } from '@iddqueue/core'
import {
  describeValue,
  type Executor,
  InvalidOptionError,
  MESSAGE_STATES,
  type MessageState,
  type Namespace,
  type NamespaceOptions,
} from '@iddqueue/schema'
import { createQueryBuilder } from '@iddqueue/schema/kysely'
import { sql } from 'kysely'
import { sampledStatsSql } from './sampled-stats-sql.js'
import { resolveSource, type StatsSource } from './stats-source.js'

/**
 * One queue's messages: a count per stored state, plus the backlog as
 * workers see it.
 *
 * @example
 * const [emails] = await queueStats(broker, { queue: 'emails' })
 * if (emails!.oldestReadyMs > 60_000) console.warn(`emails: ${emails!.ready} ready, oldest ${emails!.oldestReadyMs} ms`)
 */
export type QueueStats = { readonly queue: string } & Readonly<Record<MessageState, number>> & {
    /** Queued and due: what a worker would claim now. */
    readonly ready: number
    /** Queued or consumed (prefetched) with an eta still in the future. */
    readonly scheduled: number
    /**
     * Age of the oldest ready message, from the later of its last enqueue
     * (send, retry, recovery) and its eta; 0 when none is ready.
     */
    readonly oldestReadyMs: number
    /** Messages that ended `done` in the last minute (0 with `deleteOnSuccess`). */
    readonly doneLastMinute: number
    /** Messages that ended `done` in the last hour (0 with `deleteOnSuccess`). */
    readonly doneLastHour: number
    /**
     * Present (true) only when `done` and `cancelled` are estimates from a
     * block sample (`retained: 'estimate'` over a table larger than the
     * sample); every other field is always exact.
     */
    readonly estimated?: true
  }

/**
 * Options of {@link queueStats}.
 *
 * @example
 * const options: QueueStatsOptions = { queue: 'emails', namespace: { schema: 'app' } }
 */
export interface QueueStatsOptions {
  /** One queue only; its snapshot is returned even when it holds nothing (all zeros). */
  readonly queue?: string
  /**
   * The schema and prefix to read, for a database source. Default the
   * default namespace; a broker source uses its own (a different one is refused).
   */
  readonly namespace?: Namespace | NamespaceOptions
  /**
   * How the retained `done` and `cancelled` totals are counted. `'exact'`
   * (the default) counts every row in one grouped scan of the table, so its
   * cost grows with the retention (about 0.8 s at a million rows here).
   * `'estimate'` reads them from a sample of at most 500 table blocks (4 MB) and
   * marks the snapshot `estimated: true` (a table that small is read whole
   * and counted exactly); everything else stays exact and comes from
   * indexes whose size follows the backlog, the rejected rows and the last
   * hour's throughput, never the retention. Dashboards use `'estimate'`.
   */
  readonly retained?: 'exact' | 'estimate'
  /**
   * Whether to count `doneLastMinute` and `doneLastHour`. `true` (the
   * default) counts them exactly; with `retained: 'estimate'` that part
   * costs what the last hour finished, not the retention (900,000 index
   * entries at 1,000 messages/s). `false` skips it and reports both as 0:
   * for a caller that counts finished messages itself and keeps the
   * counts across reads, as the dashboard does (decision 0017).
   */
  readonly lastHour?: boolean
}

type Row = { queue: string } & Record<
  MessageState | 'ready' | 'scheduled' | 'done_minute' | 'done_hour',
  string
> & { oldest_ready_ms: number | null }

/**
 * A snapshot of every queue that holds messages (or of the one selected),
 * in queue order, from one grouped scan of the messages table. Read-only.
 *
 * By default the scan covers retained finished rows too, so its cost grows
 * with the retention (see docs/performance.md): it is meant for people and
 * scrapes every 15 seconds or more, not for a hot path. With `retained:
 * 'estimate'` the retained done and cancelled totals come from a bounded
 * block sample instead (marked `estimated: true`) and the rest from indexes,
 * so a snapshot costs milliseconds at any retention.
 *
 * @example
 * import { queueStats } from '@iddqueue/metrics'
 *
 * for (const s of await queueStats(broker)) {
 *   console.log(s.queue, s.ready, s.scheduled, s.rejected, s.oldestReadyMs)
 * }
 * // Fast at any retention, done and cancelled estimated:
 * const live = await queueStats(broker, { retained: 'estimate' })
 * // From a plain postgres.js pool, in another namespace:
 * const [one] = await queueStats(sql, { queue: 'emails', namespace: { schema: 'app' } })
 */
export async function queueStats(
  source: StatsSource,
  options: QueueStatsOptions = {},
): Promise<QueueStats[]> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError(
      `Invalid queueStats() options ${describeValue(options)}: expected an object`,
    )
  const { queue, retained = 'exact', lastHour = true } = options
  if (queue !== undefined) assertQueueName(queue)
  if (typeof lastHour !== 'boolean')
    throw new InvalidOptionError(
      `Invalid lastHour ${describeValue(lastHour)}: expected true or false`,
    )
  if (retained !== 'exact' && retained !== 'estimate')
    throw new InvalidOptionError(
      `Invalid retained ${describeValue(retained)}: expected 'exact' or 'estimate'`,
    )
  const { executor, ns } = resolveSource(source, options.namespace)
  if (retained === 'estimate') return sampledStats(executor, ns, queue, lastHour)
  const now = sql<Date>`now()`
  let query = createQueryBuilder(ns)
    .selectFrom('messages')
    .select((eb) => [
      'queue',
      ...MESSAGE_STATES.map((state) =>
        eb.fn.countAll<string>().filterWhere('state', '=', state).as(state),
      ),
      eb.fn
        .countAll<string>()
        .filterWhere((f) => f.and([f('state', '=', 'queued'), f('eta', '<=', now)]))
        .as('ready'),
      eb.fn
        .countAll<string>()
        .filterWhere((f) => f.and([f('state', 'in', ['queued', 'consumed']), f('eta', '>', now)]))
        .as('scheduled'),
      eb.fn
        .countAll<string>()
        .filterWhere((f) =>
          f.and([
            f('state', '=', 'done'),
            f('updated_at', '>', sql<Date>`now() - interval '1 minute'`),
          ]),
        )
        .as('done_minute'),
      eb.fn
        .countAll<string>()
        .filterWhere((f) =>
          f.and([
            f('state', '=', 'done'),
            f('updated_at', '>', sql<Date>`now() - interval '1 hour'`),
          ]),
        )
        .as('done_hour'),
      // A message is ready since it was last queued (enqueue, retry, recovery) or its eta, the later.
      sql<number | null>`(extract(epoch from now() - min(greatest(eta, updated_at))
        filter (where state = 'queued' and eta <= now())) * 1000)::float8`.as('oldest_ready_ms'),
    ])
    .groupBy('queue')
    .orderBy('queue')
  if (queue !== undefined) query = query.where('queue', '=', queue)
  const compiled = query.compile()
  const rows = await executor.query<Row>(compiled.sql, compiled.parameters)
  if (rows.length === 0 && queue !== undefined) return [emptyStats(queue)]
  return rows.map((row) => toStats(lastHour ? row : { ...row, done_minute: '0', done_hour: '0' }))
}

async function sampledStats(
  executor: Executor,
  ns: Namespace,
  queue: string | undefined,
  lastHour: boolean,
): Promise<QueueStats[]> {
  type SampledRow = Row & { sample_percent: number; sampled_fraction: number }
  const text = sampledStatsSql(ns, queue !== undefined, lastHour)
  const params = queue !== undefined ? [queue] : []
  // Each part reads a few thousand index entries or blocks: starting parallel
  // workers costs more than it saves (3x slower on a busy 2-core machine), so
  // the statement runs without them, in a transaction of its own. Inside the
  // caller's transaction a SET LOCAL would outlive the call: leave it alone.
  const rows = executor.inTransaction
    ? await executor.query<SampledRow>(text, params)
    : await executor.transaction(async (tx) => {
        await tx.query('set local max_parallel_workers_per_gather = 0')
        return tx.query<SampledRow>(text, params)
      })
  if (rows.length === 0 && queue !== undefined) return [emptyStats(queue)]
  return rows.map((row) => {
    const whole = row.sample_percent >= 100
    const scale = (n: string) =>
      whole ? Number(n) : Math.round(Number(n) / Math.max(row.sampled_fraction, 1e-9))
    return {
      ...toStats(row),
      done: scale(row.done),
      cancelled: scale(row.cancelled),
      ...(whole ? {} : { estimated: true as const }),
    }
  })
}

function toStats(row: Row): QueueStats {
  return {
    queue: row.queue,
    ...(Object.fromEntries(MESSAGE_STATES.map((state) => [state, Number(row[state])])) as Record<
      MessageState,
      number
    >),
    ready: Number(row.ready),
    scheduled: Number(row.scheduled),
    oldestReadyMs: Math.max(0, Math.round(row.oldest_ready_ms ?? 0)),
    doneLastMinute: Number(row.done_minute),
    doneLastHour: Number(row.done_hour),
  }
}

function emptyStats(queue: string): QueueStats {
  return {
    queue,
    ...(Object.fromEntries(MESSAGE_STATES.map((state) => [state, 0])) as Record<
      MessageState,
      number
    >),
    ready: 0,
    scheduled: 0,
    oldestReadyMs: 0,
    doneLastMinute: 0,
    doneLastHour: 0,
  }
}
