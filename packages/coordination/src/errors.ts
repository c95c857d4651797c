import { IddqueueError } from '@iddqueue/core'
import type { IddqueueErrorOptions } from '@iddqueue/schema'

/**
 * A limiter refused: no slot or token was free now (`tryAcquire()` returns
 * `undefined` instead), or none came free within `waitMs`. In a handler,
 * let it propagate: the retry middleware retries the message with its usual
 * backoff, as Dramatiq does (the attempt counts).
 *
 * @example
 * const api = coordination.concurrentLimiter('external-api', { limit: 5, ttlMs: 60_000 })
 * broker.actor('call', async (id: string) => {
 *   await api.withLimit(() => callExternalApi(id)) // RateLimitExceeded: retried with backoff
 * })
 */
export class RateLimitExceeded extends IddqueueError {
  constructor(
    /** The limiter's key. */
    readonly key: string,
    message: string,
    options: IddqueueErrorOptions = {},
  ) {
    super(message, options)
  }
}

/**
 * The barrier does not exist: it was never created, or its TTL passed.
 *
 * @example
 * try {
 *   await coord.barrier(key, { parties: 3, ttlMs: 60_000 }).arrive()
 * } catch (error) {
 *   if (BarrierNotFound.isInstance(error)) console.warn('barrier expired', error.key)
 * }
 */
export class BarrierNotFound extends IddqueueError {
  constructor(
    /** The barrier's key. */
    readonly key: string,
    message: string,
  ) {
    super(message)
  }
}
