import { randomUUID } from 'node:crypto'
import { InvalidOptionError } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import { checkDuration, checkInteger, checkKey } from './check.js'
import type { CoordinationLatch, CoordinationSetup } from './coordination-setup.js'
import { LimiterLease } from './lease.js'
import { type Limiter, LimiterBase, type Take } from './limiter.js'
import { lockKeySql, takeSql } from './sql/limiter-sql.js'

/**
 * Options of a window limiter.
 *
 * @example
 * const options: WindowLimiterOptions = { limit: 100, windowMs: 60_000 }
 */
export interface WindowLimiterOptions {
  /** At most this many grants within any `windowMs`, across every process. */
  readonly limit: number
  /** The sliding window, in ms. */
  readonly windowMs: number
}

interface Row {
  acquired_at: Date | null
  expires_at: Date | null
  retry_in_ms: number
}

/** @internal At most `limit` grants in any sliding window: one row per grant, counted under the key's row lock. */
export class WindowLimiter extends LimiterBase implements Limiter {
  readonly limit: number
  readonly windowMs: number

  constructor(latch: CoordinationLatch, key: string, options: WindowLimiterOptions) {
    // Checked before the label is built: a key that is not a string is refused, not rendered.
    const checked = checkKey('windowLimiter', key)
    const what = `windowLimiter(${describeValue(checked.slice(0, 60))})`
    super(checked, latch, what, `window:${checked}`)
    if (typeof options !== 'object' || options === null) {
      throw new InvalidOptionError(`Invalid options for ${what}: expected { limit, windowMs }`)
    }
    this.limit = checkInteger(what, 'limit', options.limit)
    this.windowMs = checkDuration(what, 'windowMs', options.windowMs)
  }

  protected async take(setup: CoordinationSetup): Promise<Take> {
    const [row] = await setup.executor.transaction(async (tx) => {
      await tx.query(lockKeySql(setup.ns), ['window', this.key])
      return tx.query<Row>(takeSql(setup.ns, 'window'), [
        this.key,
        randomUUID(),
        this.limit,
        this.windowMs,
      ])
    })
    if (!row?.acquired_at || !row.expires_at)
      return { lease: undefined, retryInMs: row?.retry_in_ms ?? 0 }
    return {
      lease: new LimiterLease(this.key, row.acquired_at, row.expires_at, undefined),
      retryInMs: 0,
    }
  }
}
