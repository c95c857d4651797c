import type { IddqueuePlugin } from '@iddqueue/core'
import { InvalidOptionError } from '@iddqueue/schema'
import { Counter, Gauge, Histogram, type Registry, register } from 'prom-client'

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
 * bucket of its own.
 */
export const JOB_DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600,
])

const CLAIM_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
const CLAIM_SIZE_BUCKETS = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]

type Labels = 'queue' | 'actor'

interface Children {
  readonly enqueued: Counter.Internal
  readonly done: Counter.Internal
  readonly failed: Counter.Internal
  readonly retried: Counter.Internal
  readonly rejected: Counter.Internal
  readonly cancelled: Counter.Internal
  readonly skipped: Counter.Internal
  readonly running: Gauge.Internal<Labels>
  readonly duration: Histogram.Internal<Labels>
  readonly wait: Histogram.Internal<Labels>
}

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
  const registry = options.registry ?? register
  const prefix = options.prefix ?? 'iddqueue_worker_'
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    throw new InvalidOptionError(
      `Invalid prefix ${JSON.stringify(prefix)}: expected letters, digits, _ and :, not starting with a digit`,
    )
  }
  const labelNames = ['queue', 'actor'] as const
  const registers = [registry]
  const counter = (name: string, help: string) =>
    new Counter({ name: `${prefix}${name}`, help, labelNames, registers })
  const enqueued = counter('messages_enqueued_total', 'Messages written by this process.')
  const done = counter('messages_done_total', 'Handler runs that succeeded.')
  const failed = counter('messages_failed_total', 'Attempts that failed (retried or rejected).')
  const retried = counter('messages_retried_total', 'Failed attempts that will be retried.')
  const rejected = counter('messages_rejected_total', 'Messages rejected for good.')
  const cancelled = counter('messages_cancelled_total', 'Runs that ended cancelled.')
  const skipped = counter(
    'messages_skipped_total',
    'Messages handed back to the queue without running (pause, shutdown).',
  )
  const recovered = new Counter({
    name: `${prefix}messages_recovered_total`,
    help: 'Messages of dead workers put back in their queue by crash recovery run in this process.',
    labelNames: ['queue'] as const,
    registers,
  })
  const running = new Gauge({
    name: `${prefix}messages_running`,
    help: 'Handlers running now.',
    labelNames,
    registers,
  })
  const capacity = new Gauge({
    name: `${prefix}capacity`,
    help: 'Handlers the running workers of this process may run at once.',
    registers,
  })
  const duration = new Histogram({
    name: `${prefix}handler_duration_seconds`,
    help: 'Time from the start of a handler run to its outcome.',
    labelNames,
    buckets: [...JOB_DURATION_BUCKETS],
    registers,
  })
  const wait = new Histogram({
    name: `${prefix}queue_wait_seconds`,
    help: 'Time from a message becoming due (send, delay or backoff end) to its start.',
    labelNames,
    buckets: [...JOB_DURATION_BUCKETS],
    registers,
  })
  const claimDuration = new Histogram({
    name: `${prefix}claim_duration_seconds`,
    help: 'Time a claim statement took.',
    buckets: CLAIM_DURATION_BUCKETS,
    registers,
  })
  const claimSize = new Histogram({
    name: `${prefix}claim_batch_size`,
    help: 'Messages returned by one claim statement.',
    buckets: CLAIM_SIZE_BUCKETS,
    registers,
  })

  // Label lookups hash the label set; the hot path resolves each
  // (queue, actor) pair once and then touches the children directly.
  const children = new Map<string, Children>()
  const of = (queue: string, actor: string): Children => {
    const key = `${queue}\u0000${actor}`
    let c = children.get(key)
    if (!c) {
      c = {
        enqueued: enqueued.labels(queue, actor),
        done: done.labels(queue, actor),
        failed: failed.labels(queue, actor),
        retried: retried.labels(queue, actor),
        rejected: rejected.labels(queue, actor),
        cancelled: cancelled.labels(queue, actor),
        skipped: skipped.labels(queue, actor),
        running: running.labels(queue, actor),
        duration: duration.labels(queue, actor),
        wait: wait.labels(queue, actor),
      }
      children.set(key, c)
    }
    return c
  }

  return {
    name: '@iddqueue/metrics/worker',
    setup(context) {
      const workers = new Map<string, number>()
      const off = [
        context.on('message:enqueued', ({ message }) =>
          of(message.queue, message.actor).enqueued.inc(),
        ),
        context.on('message:started', ({ message, queueWaitMs }) => {
          const c = of(message.queue, message.actor)
          c.running.inc()
          c.wait.observe(queueWaitMs / 1000)
        }),
        context.on('message:finished', ({ message, outcome, durationMs }) => {
          const c = of(message.queue, message.actor)
          c.running.dec()
          switch (outcome.kind) {
            case 'success':
              c.done.inc()
              break
            case 'failure':
              c.failed.inc()
              if (outcome.retryDelayMs === undefined) c.rejected.inc()
              else c.retried.inc()
              break
            case 'cancelled':
              c.cancelled.inc()
              break
            case 'requeue':
              c.skipped.inc()
              return
          }
          c.duration.observe(durationMs / 1000)
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
