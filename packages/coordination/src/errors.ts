import { IddqueueError, InvalidOptionError } from '@iddqueue/core'
import { describeValue, type IddqueueErrorOptions } from '@iddqueue/schema'
import { checkDuration, checkKey } from './check.js'

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

/**
 * Options of {@link RateLimited}: when the message may run again, and
 * optionally the key that is limited until then.
 *
 * @example
 * throw new RateLimited({ untilMs: 30_000, key: `customer:${customerId}` })
 */
export interface RateLimitedOptions extends IddqueueErrorOptions {
  /** Run again this many ms from now. */
  readonly untilMs?: number
  /** Run again at this time (a `Retry-After` date). */
  readonly until?: Date
  /**
   * The key that is limited until then: recorded (see `listLimits()`) so
   * that every worker can hold it. Messages are held by the claim once
   * claim-enforced limits exist; today the key is stored and listed.
   */
  readonly key?: string
}

/**
 * Thrown by a handler when an external service said "not now" (HTTP 429,
 * `Retry-After`): the message goes back to its queue, due at `until`,
 * without counting an attempt (its retry budget and attempt number stay as
 * they were). Needs the coordination plugin on the worker's broker;
 * without it, it is an ordinary failure.
 *
 * @example
 * broker.actor('charge', async (customerId: string) => {
 *   const response = await fetch(`https://api.example.com/charge/${customerId}`)
 *   if (response.status === 429) {
 *     const seconds = Number(response.headers.get('retry-after') ?? 30)
 *     throw new RateLimited({ untilMs: seconds * 1_000, key: `customer:${customerId}` })
 *   }
 * })
 */
export class RateLimited extends IddqueueError {
  /** How long from when it was thrown until the message may run again, in ms. */
  readonly delayMs: number
  readonly key: string | undefined

  constructor(options: RateLimitedOptions) {
    const delayMs = rateLimitedDelay(options)
    // Checked before the message is built: a key that is not a string is refused, not rendered.
    const key = options.key === undefined ? undefined : checkKey('RateLimited', options.key)
    super(`Rate limited for ${delayMs} ms${key === undefined ? '' : ` (key ${key})`}`, options)
    this.delayMs = delayMs
    this.key = key
  }
}

/** A Date's time; NaN for an object that only inherits from Date.prototype (its getTime throws). */
function dateTime(value: Date): number {
  try {
    return Date.prototype.getTime.call(value)
  } catch {
    return Number.NaN
  }
}

function rateLimitedDelay(options: RateLimitedOptions): number {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('Invalid RateLimited options: expected { untilMs } or { until }')
  if ((options.untilMs === undefined) === (options.until === undefined))
    throw new InvalidOptionError(
      'Invalid RateLimited options: expected exactly one of untilMs and until',
    )
  if (options.until !== undefined) {
    const until = options.until instanceof Date ? dateTime(options.until) : Number.NaN
    if (Number.isNaN(until))
      throw new InvalidOptionError(
        `Invalid RateLimited until ${describeValue(options.until)}: expected a valid Date`,
      )
    return Math.max(0, Math.ceil(until - Date.now()))
  }
  return checkDuration('RateLimited', 'untilMs', options.untilMs, 0)
}
