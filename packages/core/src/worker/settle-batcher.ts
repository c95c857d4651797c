import type { BrokerContext } from '../runtime/broker-context.js'
import { isConnectionError } from '../runtime/wrap-error.js'
import { type SettleEntry, settleBatch } from './settle-batch.js'

const MAX_IN_FLIGHT = 2
const MAX_ENTRY_FAILURES = 3

/**
 * @internal Writes outcomes in batches: while a write is in flight, new
 * outcomes accumulate and go out together in the next one, so a busy worker
 * settles hundreds of messages per statement and an idle one settles at once.
 * A failed write is retried with backoff; after a failure that is not a lost
 * connection, entries are retried one by one so one bad entry cannot hold the
 * others back.
 */
export class SettleBatcher {
  #pending: SettleEntry[] = []
  #inFlight = 0
  #scheduled = false
  #retryTimer: NodeJS.Timeout | undefined
  #backoffMs = 0
  #isolate = false
  readonly #failures = new Map<SettleEntry, number>()
  #idle: (() => void) | undefined

  constructor(
    private readonly core: BrokerContext,
    private readonly workerId: string,
    private readonly batchSize: number,
    private readonly onSettled: (entries: readonly SettleEntry[]) => void,
  ) {}

  get pending(): number {
    return this.#pending.length + this.#inFlight
  }

  add(entry: SettleEntry): void {
    this.#pending.push(entry)
    this.#schedule()
  }

  /** Resolves once everything added so far is written (or given up on). */
  drain(): Promise<void> {
    if (this.pending === 0) return Promise.resolve()
    return new Promise((resolve) => {
      const previous = this.#idle
      this.#idle = () => {
        previous?.()
        resolve()
      }
      this.#schedule()
    })
  }

  /** Stops retrying; what is still pending stays consumed and crash recovery returns it. */
  abandon(): void {
    clearTimeout(this.#retryTimer)
    this.#pending = []
    this.#idle?.()
    this.#idle = undefined
  }

  #schedule(): void {
    if (
      this.#scheduled ||
      this.#retryTimer ||
      this.#inFlight >= MAX_IN_FLIGHT ||
      this.#pending.length === 0
    )
      return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      void this.#flush()
    })
  }

  async #flush(): Promise<void> {
    if (this.#pending.length === 0) return
    const batch = this.#pending.splice(0, this.#isolate ? 1 : this.batchSize)
    this.#inFlight += batch.length
    try {
      await settleBatch(this.core, batch, this.workerId)
      this.#backoffMs = 0
      this.#isolate = false
      for (const entry of batch) this.#failures.delete(entry)
      this.onSettled(batch)
    } catch (error) {
      this.#onError(batch, error)
    } finally {
      this.#inFlight -= batch.length
    }
    if (this.pending === 0) {
      const idle = this.#idle
      this.#idle = undefined
      idle?.()
    }
    this.#schedule()
  }

  #onError(batch: SettleEntry[], error: unknown): void {
    const lost = isConnectionError(error)
    this.core.logger.warn('could not record message outcomes; will retry', {
      messages: batch.length,
      error,
    })
    if (!lost) {
      this.#isolate = true
      for (const entry of batch) {
        const failures = (this.#failures.get(entry) ?? 0) + 1
        if (failures < MAX_ENTRY_FAILURES) {
          this.#failures.set(entry, failures)
        } else {
          // Give up on this entry: it stays consumed, and crash recovery
          // returns it once this worker is gone. Delivery stays at least once.
          this.#failures.delete(entry)
          this.core.logger.error('dropping an outcome that cannot be written', {
            message: entry.message.id,
            actor: entry.message.actor,
            error,
          })
          batch.splice(batch.indexOf(entry), 1)
        }
      }
    }
    this.#pending.unshift(...batch)
    this.#backoffMs = Math.min(2_000, Math.max(50, this.#backoffMs * 2))
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined
      this.#schedule()
    }, this.#backoffMs)
  }
}
