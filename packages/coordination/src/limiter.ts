import { checkWaitMs } from './check.js'
import type { CoordinationLatch, CoordinationSetup } from './coordination-setup.js'
import { RateLimitExceeded } from './errors.js'
import type { Lease } from './lease.js'

/** A waiter that relies on notifications still rechecks this often, in case one was missed. */
const BACKSTOP_MS = 2_000

/**
 * Options of {@link Limiter.acquire}.
 *
 * @example
 * const lease = await limiter.acquire({ waitMs: 10_000 })
 */
export interface AcquireOptions {
  /**
   * How long to wait for a slot or token, in ms. Default 0: refuse at once
   * with `RateLimitExceeded` when none is free. A waiter sleeps until a
   * release notification (on the broker's shared LISTEN connection) or the
   * time the next one frees, whichever is sooner; a missed notification
   * costs at most a 2 s recheck and never keeps it past `waitMs`.
   */
  readonly waitMs?: number
}

/**
 * A rate limiter shared by every process on the database: a concurrent,
 * bucket or window limiter made by the coordination plugin.
 *
 * @example
 * const limiter: Limiter = coord.windowLimiter('geocoder', { limit: 50, windowMs: 1_000 })
 * const place = await limiter.withLimit(() => geocode(address), { waitMs: 2_000 })
 */
export interface Limiter {
  /** The limiter's key, shared by every process that uses it. */
  readonly key: string
  /**
   * Takes a slot or token, waiting up to `waitMs` for one; throws
   * `RateLimitExceeded` when none is free in time.
   *
   * @example
   * await using lease = await limiter.acquire({ waitMs: 1_000 })
   */
  acquire(options?: AcquireOptions): Promise<Lease>
  /**
   * Takes a slot or token if one is free now, else returns `undefined`.
   *
   * @example
   * const lease = await limiter.tryAcquire()
   * if (!lease) return 'busy'
   * try { await work() } finally { await lease.release() }
   */
  tryAcquire(): Promise<Lease | undefined>
  /**
   * Runs `fn` holding a slot or token, and releases it after, whatever `fn` does.
   *
   * @example
   * const body = await limiter.withLimit(() => fetch(url).then((r) => r.text()), { waitMs: 5_000 })
   */
  withLimit<T>(fn: () => T | Promise<T>, options?: AcquireOptions): Promise<T>
}

/** @internal What one try came to. */
export interface Take {
  readonly lease: Lease | undefined
  /** When refused: ms until a slot or token frees by itself (expiry, next bucket). */
  readonly retryInMs: number
}

/**
 * @internal The waiting logic shared by the three limiters. `take` makes one
 * try; waiting registers with the process's waiters before the first try,
 * so a release that lands between a refused try and the sleep still wakes it.
 */
export abstract class LimiterBase implements Limiter {
  constructor(
    readonly key: string,
    private readonly latch: CoordinationLatch,
    private readonly what: string,
    /** The waiters' key: `<kind>:<key>`, as releases name it. */
    private readonly waitKey: string,
  ) {}

  /** @internal One try. */
  protected abstract take(setup: CoordinationSetup): Promise<Take>

  async acquire(options?: AcquireOptions): Promise<Lease> {
    const waitMs = checkWaitMs(`${this.what}.acquire()`, options)
    const setup = await this.latch.wait(`acquire ${this.what}`)
    if (waitMs === 0) return this.#granted(await this.take(setup), 0)
    const deadline = performance.now() + waitMs
    const waiter = await setup.waiters.add(this.waitKey)
    try {
      for (;;) {
        const take = await this.take(setup)
        const remaining = deadline - performance.now()
        if (take.lease || remaining <= 0) return this.#granted(take, waitMs)
        const cap = waiter.notified ? BACKSTOP_MS : setup.pollIntervalMs
        await waiter.next(Math.max(1, Math.min(remaining, take.retryInMs + 1, cap)))
      }
    } finally {
      setup.waiters.remove(waiter)
    }
  }

  async tryAcquire(): Promise<Lease | undefined> {
    const setup = await this.latch.wait(`acquire ${this.what}`)
    return (await this.take(setup)).lease
  }

  async withLimit<T>(fn: () => T | Promise<T>, options?: AcquireOptions): Promise<T> {
    const lease = await this.acquire(options)
    try {
      return await fn()
    } finally {
      await lease.release()
    }
  }

  #granted(take: Take, waitMs: number): Lease {
    if (take.lease) return take.lease
    throw new RateLimitExceeded(
      this.key,
      waitMs === 0
        ? `${this.what} refused: its limit is reached`
        : `${this.what} refused: its limit stayed reached for ${waitMs} ms`,
    )
  }
}
