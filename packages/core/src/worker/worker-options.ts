import { assertName } from '../actor/names.js'
import {
  integerOption,
  labelledRefusal,
  MAX_RETENTION_MS,
  MAX_TIMER_MS,
  refuseOption,
} from '../options/check-option.js'
import { WORKER_DEFAULTS as D } from './worker-defaults.js'

/**
 * How a worker runs. Every field has a default suited to production.
 *
 * @example
 * const worker = broker.worker({ queues: ['emails', 'reports'], concurrency: 32, shutdownTimeoutMs: 60_000 })
 */
export interface WorkerOptions {
  /** Queues to consume. Default: every queue of the actors declared when `start()` runs. */
  readonly queues?: readonly string[] | undefined
  /** Handlers running at once. Default 10. */
  readonly concurrency?: number | undefined
  /**
   * Messages claimed ahead of free slots. `'auto'` (the default) sizes the
   * buffer to about 250 ms of work at the measured completion rate, up to
   * 1,000: large for fast handlers, small for slow ones, so one worker does
   * not hoard a backlog other workers could run.
   */
  readonly prefetch?: number | 'auto' | undefined
  /** Longest sleep when idle; notifications usually wake the worker sooner. Default 5,000 ms. */
  readonly pollIntervalMs?: number | undefined
  /** How long `stop()` lets running handlers finish before aborting them. Default 30,000 ms. */
  readonly shutdownTimeoutMs?: number | undefined
  /** Heartbeat and crash-recovery sweep period. Default 2,000 ms. */
  readonly heartbeatIntervalMs?: number | undefined
  /**
   * A worker silent for this long is presumed dead and its messages go back
   * to the queue. Must exceed the longest time a handler blocks the event
   * loop synchronously. Default 6,000 ms (recovery within about 8 s).
   */
  readonly staleAfterMs?: number | undefined
  /** How often one worker of the namespace purges old rows; `false` turns it off. Default one hour. */
  readonly purgeIntervalMs?: number | false | undefined
  /** Finished messages older than this are purged. Default 30 days. */
  readonly retentionMs?: number | undefined
  /**
   * The deadline of each of the worker's own database calls (claim,
   * heartbeat, settle, recovery, control), in ms. Past it the call fails as
   * if the connection broke and is retried; a claim that still commits
   * later is handed back by the reconciliation that follows. Default 15,000.
   */
  readonly queryTimeoutMs?: number | undefined
  /** Most outcomes written by one settle statement. Default 1,000. */
  readonly settleBatchSize?: number | undefined
  /**
   * Transactional handlers (actors with `transactional: true`) running at
   * once; each holds a pool connection for its transaction, and the others
   * wait for one. At most the pool size less 2 (kept for the worker's own
   * claims and settles); more is refused with `TransactionalActorError`.
   * Default: `concurrency`, capped at that. Other actors are not limited by it.
   */
  readonly transactionalConcurrency?: number | undefined
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
  readonly queryTimeoutMs: number
  readonly transactionalConcurrency: number | undefined
}

/** An integer worker option of at least `min`, or `fallback` when undefined. */
function atLeast(name: string, value: unknown, fallback: number, min = 1): number {
  return integerOption(name, value, fallback, { min, where: 'worker option' })
}

/** A worker option that arms a timer: at least `min` ms, at most what a Node timer keeps. */
function duration(name: string, value: unknown, fallback: number, min: number): number {
  return integerOption(name, value, fallback, { min, max: MAX_TIMER_MS, where: 'worker option' })
}

/** @internal */
export function resolveWorkerOptions(options: WorkerOptions): ResolvedWorkerOptions {
  if (options.queues !== undefined) {
    if (!Array.isArray(options.queues) || options.queues.length === 0) {
      throw labelledRefusal(
        'queues',
        options.queues,
        'a non-empty array of queue names',
        'worker option queues',
      )
    }
    for (const queue of options.queues) assertName('queue', queue)
  }
  const prefetch =
    options.prefetch === 'auto' || options.prefetch === undefined
      ? 'auto'
      : atLeast('prefetch', options.prefetch, 0, 0)
  const heartbeatIntervalMs = duration(
    'heartbeatIntervalMs',
    options.heartbeatIntervalMs,
    D.heartbeatIntervalMs,
    10,
  )
  const staleAfterMs = duration('staleAfterMs', options.staleAfterMs, D.staleAfterMs, 10)
  if (staleAfterMs < heartbeatIntervalMs * 2) {
    throw refuseOption(
      `Invalid worker options: staleAfterMs (${staleAfterMs}) must be at least twice heartbeatIntervalMs (${heartbeatIntervalMs})`,
      {
        option: 'staleAfterMs',
        value: staleAfterMs,
        expected: `an integer of at least ${heartbeatIntervalMs * 2} (twice heartbeatIntervalMs)`,
      },
    )
  }
  const purgeIntervalMs =
    options.purgeIntervalMs === false
      ? false
      : duration('purgeIntervalMs', options.purgeIntervalMs, D.purgeIntervalMs, 10)
  return {
    queues: options.queues ? [...new Set(options.queues)] : undefined,
    concurrency: atLeast('concurrency', options.concurrency, D.concurrency),
    prefetch,
    pollIntervalMs: duration('pollIntervalMs', options.pollIntervalMs, D.pollIntervalMs, 10),
    shutdownTimeoutMs: duration(
      'shutdownTimeoutMs',
      options.shutdownTimeoutMs,
      D.shutdownTimeoutMs,
      0,
    ),
    heartbeatIntervalMs,
    staleAfterMs,
    purgeIntervalMs,
    retentionMs: integerOption('retentionMs', options.retentionMs, D.retentionMs, {
      min: 1,
      max: MAX_RETENTION_MS,
      where: 'worker option',
    }),
    settleBatchSize: atLeast('settleBatchSize', options.settleBatchSize, D.settleBatchSize),
    queryTimeoutMs: duration('queryTimeoutMs', options.queryTimeoutMs, D.queryTimeoutMs, 100),
    transactionalConcurrency:
      options.transactionalConcurrency === undefined
        ? undefined
        : atLeast('transactionalConcurrency', options.transactionalConcurrency, 1),
  }
}
