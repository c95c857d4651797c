import type { IddqueuePlugin } from '@iddqueue/core'
import { describeValue, InvalidOptionError } from '@iddqueue/schema'
import { Counter, Gauge, type Registry, register } from 'prom-client'
import { Buckets, Tallies } from './tally.js'
import { TallyHistogram } from './tally-histogram.js'

/**
 * Options of {@link workerMetrics}.
 *
 * @example
 * const options: WorkerMetricsOptions = { registry: new Registry(), prefix: 'billing_' }
 */
export interface WorkerMetricsOptions {
  /** Where the metrics are registered. Default prom-client's global `register`. */
  readonly registry?: Registry
  /** Prepended to every metric name. Default `'iddqueue_worker_'`. */
  readonly prefix?: string
}

/**
 * Seconds, from 5 ms to an hour: jobs range from quick calls to long
 * exports, and a wait or a run of tens of minutes must still land in a
 * bucket of its own. The buckets of `handler_duration_seconds` and
 * `queue_wait_seconds`.
 *
 * @example
 * const slowest = JOB_DURATION_BUCKETS.at(-1) // 3600: an hour
 */
export const JOB_DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600,
])

const CLAIM_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
const CLAIM_SIZE_BUCKETS = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]

const PREFIX_PATTERN = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/

/**
 * A plugin that exports what this process's workers and producers do, as
 * prom-client metrics (names below with the default prefix
 * `iddqueue_worker_`). Labels are `queue` and `actor` only, never ids or
 * arguments.
 *
 * - counters `messages_enqueued_total`, `messages_done_total`,
 *   `messages_failed_total` (every failed attempt), `messages_retried_total`,
 *   `messages_rejected_total`, `messages_cancelled_total`,
 *   `messages_skipped_total` (handed back unrun: pause, shutdown), and
 *   `messages_recovered_total{queue}` (put back by crash recovery);
 * - gauges `messages_running` and `capacity` (the workers' concurrency);
 * - histograms `handler_duration_seconds` and `queue_wait_seconds` (from
 *   the eta, that is the send or the end of a delay or backoff, to the
 *   start), with {@link JOB_DURATION_BUCKETS}; `claim_duration_seconds` and
 *   `claim_batch_size` (messages per claim statement).
 *
 * Serve the registry with {@link serveMetrics} or your own endpoint.
 *
 * @example
 * import { serveMetrics, workerMetrics } from '@iddqueue/metrics'
 * import { Registry } from 'prom-client'
 *
 * const registry = new Registry()
 * const broker = createBroker({ url, plugins: [workerMetrics({ registry })] })
 * await broker.worker({ concurrency: 8 }).start()
 * await serveMetrics({ registry, port: 9191, host: '0.0.0.0' })
 */
export function workerMetrics(options: WorkerMetricsOptions = {}): IddqueuePlugin {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError(
      `Invalid workerMetrics() options ${describeValue(options)}: expected an object`,
    )
  const registry = options.registry ?? register
  const prefix = options.prefix ?? 'iddqueue_worker_'
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    throw new InvalidOptionError(
      `Invalid prefix ${describeValue(prefix)}: expected letters, digits, _ and :, not starting with a digit`,
    )
  }
  const labelNames = ['queue', 'actor'] as const
  const registers = [registry]
  const tallies = new Tallies(JOB_DURATION_BUCKETS)
  type Count = 'enqueued' | 'done' | 'failed' | 'retried' | 'rejected' | 'cancelled' | 'skipped'
  // Read at scrape time from the tallies the listeners add to.
  const counter = (name: string, help: string, field: Count) =>
    new Counter({
      name: `${prefix}${name}`,
      help,
      labelNames,
      registers,
      collect() {
        this.reset()
        for (const tally of tallies) this.inc(tally.labels, tally[field])
      },
    })
  counter('messages_enqueued_total', 'Messages written by this process.', 'enqueued')
  counter('messages_done_total', 'Handler runs that succeeded.', 'done')
  counter('messages_failed_total', 'Attempts that failed (retried or rejected).', 'failed')
  counter('messages_retried_total', 'Failed attempts that will be retried.', 'retried')
  counter('messages_rejected_total', 'Messages rejected for good.', 'rejected')
  counter('messages_cancelled_total', 'Runs that ended cancelled.', 'cancelled')
  counter(
    'messages_skipped_total',
    'Messages handed back to the queue without running (pause, shutdown).',
    'skipped',
  )
  new Gauge({
    name: `${prefix}messages_running`,
    help: 'Handlers running now.',
    labelNames,
    registers,
    collect() {
      this.reset()
      for (const tally of tallies) this.set(tally.labels, tally.running)
    },
  })
  const recovered = new Counter({
    name: `${prefix}messages_recovered_total`,
    help: 'Messages of dead workers put back in their queue by crash recovery run in this process.',
    labelNames: ['queue'] as const,
    registers,
  })
  const capacity = new Gauge({
    name: `${prefix}capacity`,
    help: 'Handlers the running workers of this process may run at once.',
    registers,
  })
  new TallyHistogram(
    `${prefix}handler_duration_seconds`,
    'Time from the start of a handler run to its outcome.',
    labelNames,
    function* () {
      for (const tally of tallies) yield { labels: tally.labels, buckets: tally.duration }
    },
  ).register(registry)
  new TallyHistogram(
    `${prefix}queue_wait_seconds`,
    'Time from a message becoming due (send, delay or backoff end) to its start.',
    labelNames,
    function* () {
      for (const tally of tallies) yield { labels: tally.labels, buckets: tally.wait }
    },
  ).register(registry)
  const claimDuration = new Buckets(CLAIM_DURATION_BUCKETS)
  const claimSize = new Buckets(CLAIM_SIZE_BUCKETS)
  new TallyHistogram(`${prefix}claim_duration_seconds`, 'Time a claim statement took.', [], () => [
    { labels: {}, buckets: claimDuration },
  ]).register(registry)
  new TallyHistogram(
    `${prefix}claim_batch_size`,
    'Messages returned by one claim statement.',
    [],
    () => [{ labels: {}, buckets: claimSize }],
  ).register(registry)

  return {
    name: '@iddqueue/metrics/worker',
    setup(context) {
      const workers = new Map<string, number>()
      const off = [
        context.on('message:enqueued', ({ message }) => {
          tallies.of(message.queue, message.actor).enqueued++
        }),
        context.on('message:started', ({ message, queueWaitMs }) => {
          const tally = tallies.of(message.queue, message.actor)
          tally.running++
          tally.wait.observe(queueWaitMs / 1000)
        }),
        context.on('message:finished', ({ message, outcome, durationMs }) => {
          const tally = tallies.of(message.queue, message.actor)
          tally.running--
          switch (outcome.kind) {
            case 'success':
              tally.done++
              break
            case 'failure':
              tally.failed++
              if (outcome.retryDelayMs === undefined) tally.rejected++
              else tally.retried++
              break
            case 'cancelled':
              tally.cancelled++
              break
            case 'requeue':
              tally.skipped++
              return
          }
          tally.duration.observe(durationMs / 1000)
        }),
        context.on('worker:claimed', ({ count, durationMs }) => {
          claimDuration.observe(durationMs / 1000)
          claimSize.observe(count)
        }),
        context.on('messages:recovered', ({ messages }) => {
          for (const m of messages) if (m.state === 'queued') recovered.inc({ queue: m.queue })
        }),
        context.on('worker:started', ({ workerId, concurrency }) => {
          workers.set(workerId, concurrency)
          capacity.inc(concurrency)
        }),
        context.on('worker:stopped', ({ workerId }) => {
          const concurrency = workers.get(workerId)
          if (concurrency === undefined) return
          workers.delete(workerId)
          capacity.dec(concurrency)
        }),
      ]
      return () => {
        for (const stop of off) stop()
      }
    },
  }
}
