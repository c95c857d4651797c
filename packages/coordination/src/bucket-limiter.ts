import { InvalidOptionError } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import { checkDuration, checkInteger, checkKey } from './check.js'
import type { CoordinationLatch, CoordinationSetup } from './coordination-setup.js'
import { LimiterLease } from './lease.js'
import { type Limiter, LimiterBase, type Take } from './limiter.js'
import { takeTokenSql } from './sql/limiter-sql.js'

/**
 * Options of a bucket limiter.
 *
 * @example
 * const options: BucketLimiterOptions = { limit: 10, bucketMs: 1_000 }
 */
export interface BucketLimiterOptions {
  /** At most this many grants per bucket, across every process. */
  readonly limit: number
  /** The fixed bucket, in ms; buckets start at multiples of it since the epoch (PostgreSQL's clock). */
  readonly bucketMs: number
}

interface Row {
  count: number | null
  acquired_at: Date
  expires_at: Date
  retry_in_ms: number
}

/** @internal At most `limit` grants per fixed bucket: one counter row per (key, bucket), taken in one statement. */
export class BucketLimiter extends LimiterBase implements Limiter {
  readonly limit: number
  readonly bucketMs: number

  constructor(latch: CoordinationLatch, key: string, options: BucketLimiterOptions) {
    // Checked before the label is built: a key that is not a string is refused, not rendered.
    const checked = checkKey('bucketLimiter', key)
    const what = `bucketLimiter(${describeValue(checked.slice(0, 60))})`
    super(checked, latch, what, `bucket:${checked}`)
    if (typeof options !== 'object' || options === null) {
      throw new InvalidOptionError(`Invalid options for ${what}: expected { limit, bucketMs }`)
    }
    this.limit = checkInteger(what, 'limit', options.limit)
    this.bucketMs = checkDuration(what, 'bucketMs', options.bucketMs)
  }

  protected async take(setup: CoordinationSetup): Promise<Take> {
    const [row] = await setup.executor.query<Row>(takeTokenSql(setup.ns), [
      this.key,
      this.limit,
      this.bucketMs,
    ])
    if (!row || row.count === null) return { lease: undefined, retryInMs: row?.retry_in_ms ?? 0 }
    return {
      lease: new LimiterLease(this.key, row.acquired_at, row.expires_at, undefined),
      retryInMs: 0,
    }
  }
}
