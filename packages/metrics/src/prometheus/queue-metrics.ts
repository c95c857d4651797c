import type { Namespace, NamespaceOptions } from '@iddqueue/schema'
import { describeValue, InvalidOptionError, MESSAGE_STATES } from '@iddqueue/schema'
import { Gauge, type Registry, register } from 'prom-client'
import { assertQueueName } from '@iddqueue/core'
import { type QueueStats, queueStats } from '../stats/queue-stats.js'
import { resolveSource, type StatsSource } from '../stats/stats-source.js'

/**
 * Options of {@link queueMetrics}.
 *
 * @example
 * const options: QueueMetricsOptions = { registry: new Registry(), namespace: { schema: 'app' } }
 */
export interface QueueMetricsOptions {
  /** Where the gauges are registered. Default prom-client's global `register`. */
  readonly registry?: Registry
  /** Export one queue only (zeros when it is empty). Default every queue holding messages. */
  readonly queue?: string
  /** The schema and prefix, for a database source (a broker uses its own). */
  readonly namespace?: Namespace | NamespaceOptions
}

/**
 * The gauges {@link queueMetrics} registered, and a way to remove them.
 *
 * @example
 * const metrics: QueueMetrics = queueMetrics(sql, { registry })
 * metrics.remove() // the registry no longer exports them
 */
export interface QueueMetrics {
  /** `iddqueue_queue_messages{queue,state}` */
  readonly messages: Gauge<'queue' | 'state'>
  /** `iddqueue_queue_ready{queue}` */
  readonly ready: Gauge<'queue'>
  /** `iddqueue_queue_scheduled{queue}` */
  readonly scheduled: Gauge<'queue'>
  /** `iddqueue_queue_oldest_ready_seconds{queue}` */
  readonly oldestReadySeconds: Gauge<'queue'>
  /** Unregisters the four gauges. */
  remove(): void
}

/**
 * Registers the queue gauges on a prom-client registry. They are read at
 * scrape time, all four from one query ({@link queueStats}), so a scrape
 * always shows the database as it is:
 *
 * - `iddqueue_queue_messages{queue,state}`: messages per stored state
 * - `iddqueue_queue_ready{queue}`: queued and due
 * - `iddqueue_queue_scheduled{queue}`: queued or prefetched with a future eta
 * - `iddqueue_queue_oldest_ready_seconds{queue}`: age of the oldest ready message
 *
 * Labels are the queue and the state only, never message ids or arguments.
 * A queue that no longer holds messages disappears from the next scrape
 * (unless it is the selected `queue`). When the query fails (the database
 * is down, the schema missing) the scrape fails with that error instead of
 * reporting an empty backlog. Run it in an exporter process or beside a
 * worker; each scrape scans the messages table, so scrape every 15–60 s.
 *
 * @example
 * import { queueMetrics, serveMetrics } from '@iddqueue/metrics'
 * import postgres from 'postgres'
 * import { Registry } from 'prom-client'
 *
 * const sql = postgres(process.env.DATABASE_URL!)
 * const registry = new Registry()
 * queueMetrics(sql, { registry })
 * const server = await serveMetrics({ registry, port: 9192, host: '127.0.0.1' })
 */
export function queueMetrics(source: StatsSource, options: QueueMetricsOptions = {}): QueueMetrics {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError(
      `Invalid queueMetrics() options ${describeValue(options)}: expected an object`,
    )
  // Checked now, not at the first scrape: a bad queue, source or namespace
  // would otherwise only fail each scrape.
  if (options.queue !== undefined) assertQueueName(options.queue)
  resolveSource(source, options.namespace)
  const registry = options.registry ?? register
  if (typeof (registry as Partial<Registry> | null)?.registerMetric !== 'function')
    throw new InvalidOptionError(
      `Invalid registry ${describeValue(options.registry)}: expected a prom-client Registry`,
    )
  const statsOptions = { queue: options.queue, namespace: options.namespace }
  // All four gauges collect in the same scrape (prom-client collects them
  // concurrently): they share one query, dropped once the scrape has read it.
  let pending: Promise<QueueStats[]> | undefined
  const snapshot = (): Promise<QueueStats[]> => {
    if (!pending) {
      const current = queueStats(source, statsOptions)
      pending = current
      const forget = () =>
        setImmediate(() => {
          if (pending === current) pending = undefined
        })
      current.then(forget, forget)
    }
    return pending
  }
  const messages = new Gauge({
    name: 'iddqueue_queue_messages',
    help: 'Messages in the queue by stored state (queued, consumed, done, rejected, cancelled).',
    labelNames: ['queue', 'state'] as const,
    registers: [],
    async collect() {
      const stats = await snapshot()
      this.reset()
      for (const s of stats)
        for (const state of MESSAGE_STATES) this.set({ queue: s.queue, state }, s[state])
    },
  })
  const perQueue = (name: string, help: string, pick: (s: QueueStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['queue'] as const,
      registers: [],
      async collect() {
        const stats = await snapshot()
        this.reset()
        for (const s of stats) this.set({ queue: s.queue }, pick(s))
      },
    })
  const ready = perQueue(
    'iddqueue_queue_ready',
    'Queued messages whose eta has passed: the backlog workers would claim now.',
    (s) => s.ready,
  )
  const scheduled = perQueue(
    'iddqueue_queue_scheduled',
    'Queued or prefetched messages whose eta is still in the future.',
    (s) => s.scheduled,
  )
  const oldestReadySeconds = perQueue(
    'iddqueue_queue_oldest_ready_seconds',
    'Age of the oldest ready message, from the later of its last enqueue and its eta.',
    (s) => s.oldestReadyMs / 1000,
  )
  const gauges = [messages, ready, scheduled, oldestReadySeconds]
  for (const gauge of gauges) registry.registerMetric(gauge)
  return {
    messages,
    ready,
    scheduled,
    oldestReadySeconds,
    remove() {
      for (const gauge of gauges)
        registry.removeSingleMetric((gauge as unknown as { name: string }).name)
    },
  }
}
