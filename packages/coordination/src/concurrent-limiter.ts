import { randomUUID } from 'node:crypto'
import { InvalidOptionError } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import { checkDuration, checkInteger, checkKey } from './check.js'
import type { CoordinationLatch, CoordinationSetup } from './coordination-setup.js'
import { LimiterLease } from './lease.js'
import { type Limiter, LimiterBase, type Take } from './limiter.js'
import { lockKeySql, releaseSql, takeSql } from './sql/limiter-sql.js'

/**
 * Options of a concurrent limiter.
 *
 * @example
 * const options: ConcurrentLimiterOptions = { limit: 5, ttlMs: 60_000 }
 */
export interface ConcurrentLimiterOptions {
  /** At most this many holders at once, across every process. */
  readonly limit: number
  /**
   * A slot not released within this many ms is free again, so a holder
   * that crashed cannot keep it forever. Choose it longer than the longest
   * holder: an expired slot can be taken while its holder still runs.
   */
  readonly ttlMs: number
}

interface Row {
  acquired_at: Date | null
  expires_at: Date | null
  retry_in_ms: number
}

/** @internal At most `limit` holders at once: a slot row per holder, counted under the key's row lock. */
export class ConcurrentLimiter extends LimiterBase implements Limiter {
  readonly limit: number
  readonly ttlMs: number

  constructor(latch: CoordinationLatch, key: string, options: ConcurrentLimiterOptions) {
    // Checked before the label is built: a key that is not a string is refused, not rendered.
    const checked = checkKey('concurrentLimiter', key)
    const what = `concurrentLimiter(${describeValue(checked.slice(0, 60))})`
    super(checked, latch, what, `concurrent:${checked}`)
    if (typeof options !== 'object' || options === null) {
      throw new InvalidOptionError(`Invalid options for ${what}: expected { limit, ttlMs }`)
    }
    this.limit = checkInteger(what, 'limit', options.limit)
    this.ttlMs = checkDuration(what, 'ttlMs', options.ttlMs)
  }

  protected async take(setup: CoordinationSetup): Promise<Take> {
    const holder = randomUUID()
    const [row] = await setup.executor.transaction(async (tx) => {
      await tx.query(lockKeySql(setup.ns), ['concurrent', this.key])
      return tx.query<Row>(takeSql(setup.ns, 'concurrent'), [
        this.key,
        holder,
        this.limit,
        this.ttlMs,
      ])
    })
    if (!row?.acquired_at || !row.expires_at)
      return { lease: undefined, retryInMs: row?.retry_in_ms ?? 0 }
    const release = async () => {
      const [released] = await setup.executor.query<{ released: number }>(releaseSql(setup.ns), [
        this.key,
        holder,
        setup.channel,
        `one:concurrent:${this.key}`,
      ])
      return (released?.released ?? 0) > 0
    }
    return {
      lease: new LimiterLease(this.key, row.acquired_at, row.expires_at, release),
      retryInMs: 0,
    }
  }
}
