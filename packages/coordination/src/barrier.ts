import { InvalidOptionError } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import { checkDuration, checkInteger, checkKey } from './check.js'
import type { CoordinationLatch } from './coordination-setup.js'
import { BarrierNotFound } from './errors.js'
import { arriveSql, createBarrierSql, readBarrierSql } from './sql/barrier-sql.js'

/** A waiter that relies on notifications still rechecks this often, in case one was missed. */
const BACKSTOP_MS = 2_000

/**
 * Options of a barrier.
 *
 * @example
 * const options: BarrierOptions = { parties: 3, ttlMs: 15 * 60_000 }
 */
export interface BarrierOptions {
  /** How many arrivals open it. */
  readonly parties: number
  /** How long it lives after `create()`, in ms; after that it is gone (and `purge()` deletes it). */
  readonly ttlMs: number
}

/**
 * Options of {@link Barrier.wait}.
 *
 * @example
 * const open = await barrier.wait({ timeoutMs: 30_000 })
 */
export interface BarrierWaitOptions {
  /** How long to wait, in ms. Default 10,000. */
  readonly timeoutMs?: number
}

/**
 * A barrier shared by every process: it opens when `parties` arrivals
 * have been counted. State lives in PostgreSQL until the TTL, so a waiter
 * that starts late, or misses the notification, still sees it open.
 *
 * @example
 * const barrier = coord.barrier(`import:${importId}`, { parties: 3, ttlMs: 600_000 })
 * await barrier.create()              // once, anywhere; false if it exists
 * await barrier.arrive()              // each party, in any process
 * if (!(await barrier.wait({ timeoutMs: 60_000 }))) throw new Error('parties missing')
 */
export class Barrier {
  readonly key: string
  readonly parties: number
  readonly ttlMs: number
  readonly #latch: CoordinationLatch
  readonly #what: string

  /** @internal Use `coordination().barrier()`. */
  constructor(latch: CoordinationLatch, key: string, options: BarrierOptions) {
    // Checked before the label is built: a key that is not a string is refused, not rendered.
    this.key = checkKey('barrier', key)
    this.#what = `barrier(${describeValue(this.key.slice(0, 60))})`
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionError(`Invalid options for ${this.#what}: expected { parties, ttlMs }`)
    this.parties = checkInteger(this.#what, 'parties', options.parties)
    this.ttlMs = checkDuration(this.#what, 'ttlMs', options.ttlMs)
    this.#latch = latch
  }

  /**
   * Creates the barrier with no arrivals (or resets one whose TTL passed).
   * Returns false when a live barrier with this key exists already, which
   * is left unchanged, so every party may call it.
   *
   * @example
   * await barrier.create()
   */
  async create(): Promise<boolean> {
    const setup = await this.#latch.wait(`create ${this.#what}`)
    const rows = await setup.executor.query(createBarrierSql(setup.ns), [
      this.key,
      this.parties,
      this.ttlMs,
    ])
    return rows.length > 0
  }

  /**
   * Counts one arrival and returns how many have arrived. The arrival that
   * reaches `parties` notifies every waiter. Throws `BarrierNotFound` when
   * the barrier does not exist or expired.
   *
   * @example
   * const arrived = await barrier.arrive()
   */
  async arrive(): Promise<number> {
    const setup = await this.#latch.wait(`arrive at ${this.#what}`)
    const [row] = await setup.executor.query<{ arrived: number; parties: number }>(
      arriveSql(setup.ns),
      [this.key, setup.channel, `all:barrier:${this.key}`],
    )
    if (!row) throw this.#missing()
    return row.arrived
  }

  /**
   * Waits until `parties` have arrived: true then, false when `timeoutMs`
   * passed first. Waits on the broker's shared LISTEN connection (no pool
   * connection held), rechecking every 2 s in case a notification was
   * missed. Throws `BarrierNotFound` when the barrier does not exist or
   * expired.
   *
   * @example
   * await barrier.arrive()
   * const open = await barrier.wait({ timeoutMs: 30_000 })
   */
  async wait(options: BarrierWaitOptions = {}): Promise<boolean> {
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionError(`Invalid options for ${this.#what}.wait(): expected an object`)
    const timeoutMs =
      options.timeoutMs === undefined
        ? 10_000
        : checkDuration(`${this.#what}.wait()`, 'timeoutMs', options.timeoutMs, 0)
    const setup = await this.#latch.wait(`wait at ${this.#what}`)
    const deadline = performance.now() + timeoutMs
    const waiter = await setup.waiters.add(`barrier:${this.key}`)
    try {
      for (;;) {
        const [row] = await setup.executor.query<{ arrived: number; parties: number }>(
          readBarrierSql(setup.ns),
          [this.key],
        )
        if (!row) throw this.#missing()
        if (row.arrived >= row.parties) return true
        const remaining = deadline - performance.now()
        if (remaining <= 0) return false
        const cap = waiter.notified ? BACKSTOP_MS : setup.pollIntervalMs
        await waiter.next(Math.max(1, Math.min(remaining, cap)))
      }
    } finally {
      setup.waiters.remove(waiter)
    }
  }

  #missing(): BarrierNotFound {
    return new BarrierNotFound(
      this.key,
      `${this.#what} does not exist: it was never created or its TTL passed`,
    )
  }
}
