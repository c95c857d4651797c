import { InvalidOptionError } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'

/**
 * The longest limiter, barrier or limit key, in characters; a longer key is
 * refused with `InvalidOptionError`.
 *
 * @example
 * const key = `customer:${id}`.slice(0, MAX_KEY_LENGTH)
 */
export const MAX_KEY_LENGTH = 512

/**
 * @internal Refuses a key that is not a non-empty string of at most 512
 * characters, or that contains \u0000 or an unpaired surrogate.
 */
export function checkKey(what: string, key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    const shown = typeof key === 'string' ? `of ${key.length} characters` : describeValue(key)
    throw new InvalidOptionError(
      `Invalid ${what} key ${shown}: expected a non-empty string of at most ${MAX_KEY_LENGTH} characters`,
    )
  }
  if (key.includes('\u0000'))
    throw new InvalidOptionError(`Invalid ${what} key: it contains \\u0000`)
  // Sent as UTF-8, an unpaired surrogate becomes U+FFFD: 'a\ud800' and
  // 'a\udc00' would be one key, and share one limit or barrier.
  if (!key.isWellFormed())
    throw new InvalidOptionError(
      `Invalid ${what} key ${describeValue(key)}: it contains an unpaired surrogate`,
    )
  return key
}

/**
 * @internal Refuses anything but a whole number from `min` up to
 * 2^31 - 1 (a PostgreSQL integer) or, for durations, up to 2^53 - 1 ms.
 */
export function checkInteger(
  what: string,
  name: string,
  value: unknown,
  { min = 1, max = 2_147_483_647 }: { min?: number; max?: number } = {},
): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(
      `Invalid ${name} ${describeValue(value)} for ${what}: expected an integer from ${min} to ${max}`,
    )
  }
  return value
}

/** @internal A duration in ms: a positive integer, at most 2^53 - 1. */
export function checkDuration(what: string, name: string, value: unknown, min = 1): number {
  return checkInteger(what, name, value, { min, max: Number.MAX_SAFE_INTEGER })
}

/** @internal The optional `waitMs` of `acquire()`: 0 (do not wait) when absent. */
export function checkWaitMs(what: string, options: unknown): number {
  if (options === undefined) return 0
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError(`Invalid options for ${what}: expected an object`)
  const waitMs = (options as { waitMs?: unknown }).waitMs
  if (waitMs === undefined) return 0
  return checkDuration(what, 'waitMs', waitMs, 0)
}
