/**
 * Default of {@link WorkerOptions.staleAfterMs}, also used by `broker.recover()`.
 *
 * @example
 * await broker.recover({ staleAfterMs: DEFAULT_STALE_AFTER_MS * 5 })
 */
export const DEFAULT_STALE_AFTER_MS = 6_000

/**
 * Default retention of finished messages: 30 days.
 *
 * @example
 * const worker = broker.worker({ retentionMs: DEFAULT_RETENTION_MS / 10 }) // 3 days
 */
export const DEFAULT_RETENTION_MS = 30 * 24 * 3600 * 1000

/** @internal The default of every numeric worker option (see `WorkerOptions`). */
export const WORKER_DEFAULTS = Object.freeze({
  concurrency: 10,
  pollIntervalMs: 5_000,
  shutdownTimeoutMs: 30_000,
  heartbeatIntervalMs: 2_000,
  staleAfterMs: DEFAULT_STALE_AFTER_MS,
  purgeIntervalMs: 3_600_000,
  retentionMs: DEFAULT_RETENTION_MS,
  settleBatchSize: 1_000,
})
