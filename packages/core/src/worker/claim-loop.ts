import { InvalidOptionError } from '../errors.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { type ClaimClauses, claimSql, nextEtaSql } from '../sql/claim.js'
import { compareDeliveries, type Delivery } from './delivery.js'
import type { Prefetch } from './prefetch.js'
import type { RunSlots } from './run-slots.js'
import type { SettleEntry } from './settle-batch.js'
import type { ResolvedWorkerOptions } from './worker-options.js'

/** A claimed row, and whether the claim left ready rows behind to keep priority order. */
interface ClaimedRow extends Delivery {
  readonly more?: boolean
  readonly stepped?: boolean
}

/** Claims a worker may have in flight at once (the held rows below assume at most two). */
const MAX_CLAIMS_IN_FLIGHT = 2
/**
 * Longest pause between claims that failed. Short, so a worker resumes
 * within about half a second of PostgreSQL answering even when no
 * reconnection signal wakes it (poll-only mode); it was 2 s.
 */
const MAX_ERROR_BACKOFF_MS = 500

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
  /** The claim without the plugins' pre-filter, when they have one (decision 0019). */
  #leanClaimSql: string | undefined
  /** The next claim runs the pre-filter: the last one came back short or stepped over rows. */
  #prefilter = true
  #nextEtaSql = ''
  /** Candidates per claimed row a plugin's pick asks for. */
  #overfetch = 1
  /** A plugin's pick chooses the claimed rows (limits): a settle may free places. */
  #picked = false
  #queues: readonly string[] = []
  /** Claims in flight, and the rows they may bring back. */
  #claims = 0
  #claimSeq = 0
  readonly #inFlight = new Set<number>()
  /**
   * Rows whose claim answered while another claim was still in flight, and
   * that claim. Two claims in flight split the best ready rows between them
   * in whatever order PostgreSQL runs them (the later one can lock the best
   * rows first), so rows of one may be worse than rows of the other that
   * have not arrived yet. A held row starts only once the claim it waits for
   * has answered; a claim sent after its own answered can only bring rows
   * that were ready later or ranked behind.
   */
  readonly #heldBy = new WeakMap<Delivery, number>()
  #claimedAhead = 0
  #idle = false
  #wakeSeq = 0
  #idleTimer: NodeJS.Timeout | undefined
  /** The look for the next eta when the loop went idle; stop() waits for it. */
  #lookingAhead: Promise<void> = Promise.resolve()
  #idleDeadline = Number.POSITIVE_INFINITY
  #errorTimer: NodeJS.Timeout | undefined
  #errorBackoffMs = 0
  /** Holds on claiming (a reconciliation runs), and who waits for claims in flight to end. */
  #holds = 0
  #claimsEnded: (() => void)[] = []

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
    this.#queues = queues
    this.prefetch.forQueues(queues.length)
    const clauses = pluginClauses(this.core, queues)
    if (clauses) {
      // A plugin's clauses (limits): this worker's own statements.
      this.#claimSql = claimSql(this.core.ns, queues.length, clauses)
      const lean = clauses.prefilter
      this.#leanClaimSql = lean
        ? claimSql(this.core.ns, queues.length, {
            ...clauses,
            ...NO_PREFILTER,
            pick: lean.pick ?? clauses.pick,
          })
        : undefined
      this.#prefilter = true
      this.#nextEtaSql = nextEtaSql(this.core.ns, clauses)
      this.#overfetch = clauses.pick?.overfetch ?? 1
      this.#picked = clauses.pick !== undefined
      return
    }
    this.#picked = false
    this.#leanClaimSql = undefined
    this.#claimSql =
      queues.length === 1 ? this.core.statements.claimOne : this.core.statements.claimMany
    this.#nextEtaSql = this.core.statements.nextEta
  }

  /** Starts buffered messages in free slots, then claims more if slots would go unused. */
  pump(): void {
    const concurrency = this.options.concurrency
    // Strictly in buffer order: when the best claimed row must wait for the
    // other claim in flight, nothing behind it starts either.
    while (
      this.slots.size < concurrency &&
      this.buffer.length > 0 &&
      this.hooks.isRunning() &&
      this.#startable(this.buffer[0]!)
    ) {
      this.hooks.start(this.buffer.shift()!)
    }
    if (
      !this.hooks.isRunning() ||
      this.#claims >= MAX_CLAIMS_IN_FLIGHT ||
      this.#holds > 0 ||
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

  /**
   * Stops claiming until the returned function is called; resolves once no
   * claim is in flight, so every row claimed so far is in the buffer.
   */
  async pause(): Promise<() => void> {
    this.#holds++
    if (this.#claims > 0) await new Promise<void>((resolve) => this.#claimsEnded.push(resolve))
    let resumed = false
    return () => {
      if (resumed) return
      resumed = true
      this.#holds--
      this.pump()
    }
  }

  /**
   * Ends any sleep and claims at once (a notification, a resume, a
   * reconnect), without waiting out the backoff of a failed claim.
   */
  wake(): void {
    if (this.#errorTimer) {
      clearTimeout(this.#errorTimer)
      this.#errorTimer = undefined
    }
    this.#wakeSeq++
    this.#idle = false
    clearTimeout(this.#idleTimer)
    this.#idleTimer = undefined
    this.#idleDeadline = Number.POSITIVE_INFINITY
    this.pump()
  }

  /** After outcomes are written: a retry this worker scheduled wakes it if nothing else would. */
  afterSettle(entries: readonly SettleEntry[]): void {
    // A limited claim may have come back short for want of the places this
    // settle just freed: claim again now, not after the wake-up
    // notification's round trip.
    if (this.#picked && this.#idle && entries.length > 0) {
      this.wake()
      return
    }
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

  /**
   * Stops the timers and resolves once no statement of the loop is in
   * flight: a claim that answers now hands its rows to `release` (the
   * worker is no longer running). What is buffered is the caller's to release.
   */
  async stop(): Promise<void> {
    clearTimeout(this.#idleTimer)
    clearTimeout(this.#errorTimer)
    this.#errorTimer = undefined
    if (this.#claims > 0) await new Promise<void>((resolve) => this.#claimsEnded.push(resolve))
    await this.#lookingAhead
  }

  /** A buffered row may start: it waits for no claim still in flight. */
  #startable(delivery: Delivery): boolean {
    const other = this.#heldBy.get(delivery)
    if (other === undefined) return true
    if (this.#inFlight.has(other)) return false
    this.#heldBy.delete(delivery)
    return true
  }

  async #claim(limit: number): Promise<void> {
    const id = ++this.#claimSeq
    this.#claims++
    this.#inFlight.add(id)
    this.#claimedAhead += limit
    const seq = this.#wakeSeq
    const claimStarted = performance.now()
    let rows: ClaimedRow[]
    try {
      const lean = this.#leanClaimSql !== undefined && !this.#prefilter
      rows = await this.core.executor.query<ClaimedRow>(
        lean ? this.#leanClaimSql! : this.#claimSql,
        [this.#queues, limit * this.#overfetch, this.workerId],
      )
    } catch (error) {
      this.#inFlight.delete(id)
      this.#claimEnded(limit)
      this.#retryAfterError(error, 'claim messages')
      this.pump() // rows held for this claim may start now
      return
    }
    // This claim no longer holds back others' rows; its own count ends once
    // its rows are buffered (below), so a reconciliation never misses them.
    this.#inFlight.delete(id)
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
      this.#claimEnded(limit)
      if (rows.length > 0) this.hooks.release(rows)
      return
    }
    // Fewer than asked and nothing left behind for priority order: nothing
    // more is ready. Sleep, unless a wake-up came while the claim was in flight.
    // (No rows at all has no `more` either: rows counted but since locked by
    // another claim make it sleep, not spin.)
    const more = rows[0]?.more === true
    // The pre-filter is left out while it would step over nothing: a claim
    // without it that comes back short (rows refused) is followed by one with it.
    this.#prefilter = rows.length < limit || rows[0]?.stepped === true
    if (rows.length > 0) {
      const runnable = this.hooks.screen(rows)
      for (const other of this.#inFlight) for (const row of runnable) this.#heldBy.set(row, other)
      this.buffer.push(...runnable)
      this.buffer.sort(compareDeliveries)
    }
    // Only now: the rows are in the buffer before a reconciliation may look.
    this.#claimEnded(limit)
    if (rows.length < limit && !more && seq === this.#wakeSeq) this.#goIdle()
    this.pump()
  }

  #claimEnded(limit: number): void {
    this.#claims--
    this.#claimedAhead -= limit
    if (this.#claims === 0 && this.#claimsEnded.length > 0) {
      for (const resolve of this.#claimsEnded.splice(0)) resolve()
    }
  }

  #goIdle(): void {
    this.#idle = true
    const seq = this.#wakeSeq
    const poll = this.options.pollIntervalMs
    this.#lookingAhead = this.core.executor
      .query<{ wait_ms: number | null }>(this.#nextEtaSql, [this.#queues])
      .then(
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

/** A plugin's claim clauses with their pre-filter left out. */
const NO_PREFILTER = { with: undefined, eligible: undefined, prefilter: undefined } as const

/** The plugins' claim clauses for `queues`, merged, or undefined when none has any. */
function pluginClauses(core: BrokerContext, queues: readonly string[]): ClaimClauses | undefined {
  const queueSet = new Set(queues)
  const actors = [...core.actors.values()].filter((actor) => queueSet.has(actor.queue))
  const all = core.plugins.flatMap((plugin) => plugin.claimClauses?.(queues, actors) ?? [])
  if (all.length === 0) return undefined
  const picks = all.flatMap((clauses) => (clauses.pick ? [clauses.pick] : []))
  if (picks.length > 1)
    throw new InvalidOptionError('Two plugins choose the claimed rows (ClaimClauses.pick)')
  const withs = all.flatMap((clauses) => (clauses.with ? [clauses.with] : []))
  const eligibles = all.flatMap((clauses) => (clauses.eligible ? [`(${clauses.eligible})`] : []))
  const wakeAts = all.flatMap((clauses) => (clauses.wakeAt ? [clauses.wakeAt] : []))
  // A pre-filter only when every clause that filters is one.
  const filtering = all.filter((clauses) => clauses.with || clauses.eligible)
  const prefiltered = filtering.length > 0 && filtering.every((clauses) => clauses.prefilter)
  return {
    ...(withs.length > 0 ? { with: withs.join(',\n') } : {}),
    ...(eligibles.length > 0 ? { eligible: eligibles.join(' and ') } : {}),
    ...(picks[0] ? { pick: picks[0] } : {}),
    ...(wakeAts.length > 0 ? { wakeAt: `least(${wakeAts.join(', ')})` } : {}),
    ...(prefiltered
      ? {
          prefilter: {
            stepped: filtering.map((c) => `(${c.prefilter!.stepped})`).join(' or '),
            // Only the plugin whose pick it is may give a lean one.
            pick: all.find((clauses) => clauses.pick)?.prefilter?.pick,
          },
        }
      : {}),
  }
}
