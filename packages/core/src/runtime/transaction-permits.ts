import { RESERVED_CONNECTIONS, type TransactionSource } from './transaction-source.js'

/**
 * @internal How many transactional handlers of a broker may hold a pool
 * connection at once: the pool size less the connections its workers keep
 * for their own statements; unbounded when the pool size is unknown (a
 * caller's Kysely instance), 0 when the broker cannot open transactions.
 */
export function transactionCapacity(source: TransactionSource): number {
  if (source.unavailable !== undefined) return 0
  if (source.poolSize === undefined) return Number.POSITIVE_INFINITY
  return Math.max(0, source.poolSize - RESERVED_CONNECTIONS)
}

/**
 * @internal A counting semaphore: a transactional run takes a permit before
 * it opens its transaction and gives it back after commit or rollback, so
 * transactional handlers never take the connections the worker's claims and
 * settles need, and a run waiting for a permit waits here, not in the pool.
 */
export class TransactionPermits {
  #free: number
  readonly #waiting: (() => void)[] = []

  constructor(readonly capacity: number) {
    this.#free = capacity
  }

  /** Resolves once a permit is taken. */
  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--
      return Promise.resolve()
    }
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  /** Gives a permit back (to the longest waiter, if any). */
  release(): void {
    const next = this.#waiting.shift()
    if (next) next()
    else this.#free++
  }
}
