import { describeValue } from '@iddqueue/schema'
import { refuseOption } from '../options/check-option.js'

/** Default for `BrokerOptions.sendTimeoutMs`. */
export const DEFAULT_SEND_TIMEOUT_MS = 10_000

/**
 * @internal Checks `sendTimeoutMs`: a positive integer, or `false` for no
 * deadline (returned as undefined). Default {@link DEFAULT_SEND_TIMEOUT_MS}.
 */
export function resolveSendTimeout(value: unknown): number | undefined {
  if (value === undefined) return DEFAULT_SEND_TIMEOUT_MS
  if (value === false) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    const expected = 'a positive integer (ms) or false'
    throw refuseOption(`Invalid sendTimeoutMs ${describeValue(value)}: expected ${expected}`, {
      option: 'sendTimeoutMs',
      value,
      expected,
    })
  }
  return value
}

/** @internal The marker a deadline rejects with; {@link racesDeadline} tells it apart. */
export class DeadlinePassed extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer from PostgreSQL within ${timeoutMs} ms`)
    this.name = 'DeadlinePassed'
  }
}

/**
 * @internal Settles like `work`, or rejects with {@link DeadlinePassed} once
 * `deadline` (a `performance.now()` time) passes. The work itself goes on:
 * postgres.js cannot withdraw a query it queued, so a send that timed out
 * may still be stored later (its id makes a resend safe).
 */
export async function racesDeadline<T>(
  work: Promise<T>,
  deadline: number,
  timeoutMs: number,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const passed = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DeadlinePassed(timeoutMs)),
      Math.max(0, deadline - performance.now()),
    )
  })
  try {
    return await Promise.race([work, passed])
  } finally {
    clearTimeout(timer)
    // The race's loser must not become an unhandled rejection.
    work.catch(() => {})
  }
}
