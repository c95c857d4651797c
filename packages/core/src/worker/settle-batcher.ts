import type { BrokerContext } from '../runtime/broker-context.js'
import { isConnectionError } from '../runtime/wrap-error.js'
import { reportRefused } from './refused-outcomes.js'
import { type SettleEntry, settleBatch } from './settle-batch.js'

const MAX_IN_FLIGHT = 2
const MAX_ENTRY_FAILURES = 3
/**
 * Longest pause before rewriting failed outcomes. Short, so outcomes are
 * written within half a second of PostgreSQL answering again (they were
 * 10-18 s late with 2 s here and postgres.js's own backoff).
 */
const MAX_BACKOFF_MS = 500

/**
 * @internal Writes outcomes in batches: while a write is in flight, new
 * outcomes accumulate and go out together in the next one, so a busy worker
 * settles hundreds of messages per statement and an idle one settles at once.
 * A failed write is retried with backoff; after a failure that is not a lost
 * connection, entries are retried one by one so one bad entry cannot hold the
 * others back. Outcomes the guarded statements refuse (the message was no
 * longer this worker's) are reported, one warning and one
 * `messages:refused` event per batch, and not retried.
 */
export class SettleBatcher {
  #pending: SettleEntry[] = []
  #inFlight = 0
  readonly #writing = new Set<readonly SettleEntry[]>()
  #scheduled = false
  #retryTimer: NodeJS.Timeout | undefined
  #backoffMs = 0
  #isolate = false
  readonly #failures = new Map<SettleEntry, number>()
  /** Entries of a write whose connection was lost: it may have committed. */
  readonly #maybeWritten = new WeakSet<SettleEntry>()
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

  /** Ids of every message with an outcome waiting or being written. */
  *heldIds(): Generator<string> {
    for (const entry of this.#pending) yield entry.message.id
    for (const batch of this.#writing) for (const entry of batch) yield entry.message.id
  }

  /** Retries a failed write now instead of after its backoff (PostgreSQL is back). */
  retryNow(): void {
    if (!this.#retryTimer) return
    clearTimeout(this.#retryTimer)
    this.#retryTimer = undefined
    this.#schedule()
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
    // Counted once: #onError may drop entries from `batch`, which must not
    // leave them counted as in flight (drain() would then never resolve).
    const size = batch.length
    this.#inFlight += size
    this.#writing.add(batch)
    let refused: readonly SettleEntry[] = []
    try {
      refused = await settleBatch(this.core, batch, this.workerId, (entry) =>
        this.#maybeWritten.has(entry),
      )
      this.#backoffMs = 0
      this.#isolate = false
      for (const entry of batch) this.#failures.delete(entry)
      this.onSettled(batch)
    } catch (error) {
      this.#onError(batch, error)
    } finally {
      this.#inFlight -= size
      this.#writing.delete(batch)
    }
    // After the bookkeeping: refused outcomes are final, never retried.
    reportRefused(this.core, this.workerId, refused, size)
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
    if (lost) {
      for (const entry of batch) this.#maybeWritten.add(entry)
    } else {
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
    this.#backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(50, this.#backoffMs * 2))
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined
      this.#schedule()
    }, this.#backoffMs)
  }
}
