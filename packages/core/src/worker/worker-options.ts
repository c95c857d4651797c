import { assertName } from '../actor/names.js'
import { InvalidOptionError } from '../errors.js'
import { WORKER_DEFAULTS as D } from './worker-defaults.js'

/**
 * How a worker runs. Every field has a default suited to production.
 *
 * @example
 * const worker = broker.worker({ queues: ['emails', 'reports'], concurrency: 32, shutdownTimeoutMs: 60_000 })
 */
export interface WorkerOptions {
  /** Queues to consume. Default: every queue of the actors declared when `start()` runs. */
  readonly queues?: readonly string[]
  /** Handlers running at once. Default 10. */
  readonly concurrency?: number
  /**
   * Messages claimed ahead of free slots. `'auto'` (the default) sizes the
   * buffer to about 250 ms of work at the measured completion rate, up to
   * 1,000: large for fast handlers, small for slow ones, so one worker does
   * not hoard a backlog other workers could run.
   */
  readonly prefetch?: number | 'auto'
  /** Longest sleep when idle; notifications usually wake the worker sooner. Default 5,000 ms. */
  readonly pollIntervalMs?: number
  /** How long `stop()` lets running handlers finish before aborting them. Default 30,000 ms. */
  readonly shutdownTimeoutMs?: number
  /** Heartbeat and crash-recovery sweep period. Default 2,000 ms. */
  readonly heartbeatIntervalMs?: number
  /**
   * A worker silent for this long is presumed dead and its messages go back
   * to the queue. Must exceed the longest time a handler blocks the event
   * loop synchronously. Default 6,000 ms (recovery within about 8 s).
   */
  readonly staleAfterMs?: number
  /** How often one worker of the namespace purges old rows; `false` turns it off. Default one hour. */
  readonly purgeIntervalMs?: number | false
  /** Finished messages older than this are purged. Default 30 days. */
  readonly retentionMs?: number
  /** Most outcomes written by one settle statement. Default 1,000. */
  readonly settleBatchSize?: number
}

/** @internal */
export interface ResolvedWorkerOptions {
  readonly queues: readonly string[] | undefined
  readonly concurrency: number
  readonly prefetch: number | 'auto'
  readonly pollIntervalMs: number
  readonly shutdownTimeoutMs: number
  readonly heartbeatIntervalMs: number
  readonly staleAfterMs: number
  readonly purgeIntervalMs: number | false
  readonly retentionMs: number
  readonly settleBatchSize: number
}

function positive(name: string, value: unknown, fallback: number, min = 1): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new InvalidOptionError(
      `Invalid worker option ${name}: expected an integer of at least ${min}, got ${String(value)}`,
    )
  }
  return value
}

/** @internal */
export function resolveWorkerOptions(options: WorkerOptions): ResolvedWorkerOptions {
  if (options.queues !== undefined) {
    if (!Array.isArray(options.queues) || options.queues.length === 0) {
      throw new InvalidOptionError(
        'Invalid worker option queues: expected a non-empty array of queue names',
      )
    }
    for (const queue of options.queues) assertName('queue', queue)
  }
  const prefetch =
    options.prefetch === 'auto' || options.prefetch === undefined
      ? 'auto'
      : positive('prefetch', options.prefetch, 0, 0)
  const heartbeatIntervalMs = positive(
    'heartbeatIntervalMs',
    options.heartbeatIntervalMs,
    D.heartbeatIntervalMs,
    10,
  )
  const staleAfterMs = positive('staleAfterMs', options.staleAfterMs, D.staleAfterMs, 10)
  if (staleAfterMs < heartbeatIntervalMs * 2) {
    throw new InvalidOptionError(
      `Invalid worker options: staleAfterMs (${staleAfterMs}) must be at least twice heartbeatIntervalMs (${heartbeatIntervalMs})`,
    )
  }
  const purgeIntervalMs =
    options.purgeIntervalMs === false
      ? false
      : positive('purgeIntervalMs', options.purgeIntervalMs, D.purgeIntervalMs, 10)
  return {
    queues: options.queues ? [...new Set(options.queues)] : undefined,
    concurrency: positive('concurrency', options.concurrency, D.concurrency),
    prefetch,
    pollIntervalMs: positive('pollIntervalMs', options.pollIntervalMs, D.pollIntervalMs, 10),
    shutdownTimeoutMs: positive(
      'shutdownTimeoutMs',
      options.shutdownTimeoutMs,
      D.shutdownTimeoutMs,
      0,
    ),
    heartbeatIntervalMs,
    staleAfterMs,
    purgeIntervalMs,
    retentionMs: positive('retentionMs', options.retentionMs, D.retentionMs),
    settleBatchSize: positive('settleBatchSize', options.settleBatchSize, D.settleBatchSize),
  }
}
