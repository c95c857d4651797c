import type { BrokerContext } from '../runtime/broker-context.js'
import { compareDeliveries, type Delivery } from './delivery.js'
import type { Prefetch } from './prefetch.js'
import type { RunSlots } from './run-slots.js'
import type { SettleEntry } from './settle-batch.js'
import type { ResolvedWorkerOptions } from './worker-options.js'

/** Claims a worker may have in flight at once. */
const MAX_CLAIMS_IN_FLIGHT = 2
const MAX_ERROR_BACKOFF_MS = 2_000

/** @internal What the claim loop asks of the rest of the worker. */
export interface ClaimLoopHooks {
  /** False once the worker began stopping: claim nothing more. */
  isRunning(): boolean
  /** Starts a buffered message in a free slot (the executor). */
  start(delivery: Delivery): void
  /** The claimed rows that may start; the others were released or dropped (control). */
  screen(rows: Delivery[]): Delivery[]
  /** Hands rows back to the queue (a claim that returned after the worker began stopping). */
  release(rows: readonly Delivery[]): void
  reportError(error: unknown, doing: string): void
}

/**
 * @internal The worker's producer: claims messages of its queues in batches
 * sized to its free slots plus the prefetch target, keeps them in a buffer
 * ordered by priority then eta, feeds free slots from it, and sleeps when
 * nothing is ready until a wake-up, the next eta or the poll interval.
 */
export class ClaimLoop {
  /** Claimed messages waiting for a free slot, in the order they should start. */
  buffer: Delivery[] = []
  #claimSql = ''
  #nextEtaSql = ''
  #queueParam: string | readonly string[] = ''
  /** Claims in flight, and the rows they may bring back. */
  #claims = 0
  #claimedAhead = 0
  #idle = false
  #wakeSeq = 0
  #idleTimer: NodeJS.Timeout | undefined
  #idleDeadline = Number.POSITIVE_INFINITY
  #errorTimer: NodeJS.Timeout | undefined
  #errorBackoffMs = 0

  constructor(
    private readonly core: BrokerContext,
    private readonly workerId: string,
    private readonly options: ResolvedWorkerOptions,
    private readonly slots: RunSlots,
    private readonly prefetch: Prefetch,
    private readonly hooks: ClaimLoopHooks,
  ) {}

  /** Claims in flight now: a cancellation may concern a row one of them brings back. */
  get claimsInFlight(): number {
    return this.#claims
  }

  /** Chooses the statements for the queues the worker consumes. */
  configure(queues: readonly string[]): void {
    const one = queues.length === 1
    this.#claimSql = one ? this.core.statements.claimOne : this.core.statements.claimMany
    this.#nextEtaSql = one ? this.core.statements.nextEtaOne : this.core.statements.nextEtaMany
    this.#queueParam = one ? queues[0]! : queues
  }

  /** Starts buffered messages in free slots, then claims more if slots would go unused. */
  pump(): void {
    const concurrency = this.options.concurrency
    while (this.slots.size < concurrency && this.buffer.length > 0 && this.hooks.isRunning()) {
      this.hooks.start(this.buffer.shift()!)
    }
    if (
      !this.hooks.isRunning() ||
      this.#claims >= MAX_CLAIMS_IN_FLIGHT ||
      this.#idle ||
      this.#errorTimer
    )
      return
    const target = this.prefetch.target()
    const ahead = this.buffer.length + this.#claimedAhead
    const free = concurrency + target - this.slots.size - ahead
    if (free <= 0) return
    // Claim when slots would otherwise go unused, or when what is buffered
    // and on its way has drained to half the target; not for every freed
    // slot under load. A second claim may start while one is in flight, so
    // that handlers run while PostgreSQL prepares the next batch.
    const starving = ahead === 0 && this.slots.size < concurrency
    if (!starving && ahead > target / 2) return
    void this.#claim(free)
  }

  /** Ends any sleep and claims at once (a notification, a resume, a reconnect). */
  wake(): void {
    this.#wakeSeq++
    this.#idle = false
    clearTimeout(this.#idleTimer)
    this.#idleTimer = undefined
    this.#idleDeadline = Number.POSITIVE_INFINITY
    this.pump()
  }

  /** After outcomes are written: a retry this worker scheduled wakes it if nothing else would. */
  afterSettle(entries: readonly SettleEntry[]): void {
    let soonest = Number.POSITIVE_INFINITY
    for (const entry of entries) {
      if (entry.outcome.kind === 'failure' && entry.outcome.retryDelayMs !== undefined) {
        soonest = Math.min(soonest, entry.outcome.retryDelayMs)
      }
    }
    if (soonest < Number.POSITIVE_INFINITY && this.#idle)
      this.#armIdleTimer(Math.max(soonest, 1), this.#wakeSeq)
  }

  /** Removes and returns the buffered messages `which` selects. */
  take(which: (delivery: Delivery) => boolean): Delivery[] {
    const kept: Delivery[] = []
    const taken: Delivery[] = []
    for (const delivery of this.buffer) (which(delivery) ? taken : kept).push(delivery)
    this.buffer = kept
    return taken
  }

  /** Stops the timers; what is buffered is the caller's to release. */
  stop(): void {
    clearTimeout(this.#idleTimer)
    clearTimeout(this.#errorTimer)
    this.#errorTimer = undefined
  }

  async #claim(limit: number): Promise<void> {
    this.#claims++
    this.#claimedAhead += limit
    const seq = this.#wakeSeq
    const claimStarted = performance.now()
    let rows: Delivery[]
    try {
      rows = await this.core.executor.query<Delivery>(this.#claimSql, [
        this.#queueParam,
        limit,
        this.workerId,
      ])
    } catch (error) {
      this.#claims--
      this.#claimedAhead -= limit
      this.#retryAfterError(error, 'claim messages')
      return
    }
    this.#claims--
    this.#claimedAhead -= limit
    this.#errorBackoffMs = 0
    if (this.core.events.has('worker:claimed')) {
      this.core.events.emit('worker:claimed', {
        workerId: this.workerId,
        count: rows.length,
        limit,
        durationMs: performance.now() - claimStarted,
      })
    }
    if (!this.hooks.isRunning()) {
      if (rows.length > 0) this.hooks.release(rows)
      return
    }
    if (rows.length > 0) {
      const runnable = this.hooks.screen(rows)
      this.buffer.push(...runnable)
      this.buffer.sort(compareDeliveries)
    }
    // Fewer than asked: nothing more is ready. Sleep, unless a wake-up came
    // while the claim was in flight.
    if (rows.length < limit && seq === this.#wakeSeq) this.#goIdle()
    this.pump()
  }

  #goIdle(): void {
    this.#idle = true
    const seq = this.#wakeSeq
    const poll = this.options.pollIntervalMs
    this.core.executor.query<{ wait_ms: number | null }>(this.#nextEtaSql, [this.#queueParam]).then(
      ([row]) => {
        const wait = row?.wait_ms
        // A ready message we did not get is locked by a concurrent claim: look again shortly.
        this.#armIdleTimer(
          wait === null || wait === undefined ? poll : Math.min(poll, Math.max(wait, 10)),
          seq,
        )
      },
      () => this.#armIdleTimer(poll, seq),
    )
  }

  #armIdleTimer(ms: number, seq: number): void {
    if (!this.#idle || seq !== this.#wakeSeq || !this.hooks.isRunning()) return
    const deadline = performance.now() + ms
    if (this.#idleTimer && deadline >= this.#idleDeadline) return
    clearTimeout(this.#idleTimer)
    this.#idleDeadline = deadline
    this.#idleTimer = setTimeout(() => this.wake(), ms)
  }

  #retryAfterError(error: unknown, doing: string): void {
    this.hooks.reportError(error, doing)
    if (!this.hooks.isRunning()) return
    this.#errorBackoffMs = Math.min(MAX_ERROR_BACKOFF_MS, Math.max(100, this.#errorBackoffMs * 2))
    this.#errorTimer = setTimeout(() => {
      this.#errorTimer = undefined
      this.pump()
    }, this.#errorBackoffMs)
  }
}
