import { randomUUID } from 'node:crypto'
import type { ActorDefinition } from '../actor/actor-definition.js'
import type { BrokerContext } from '../broker/broker-context.js'
import { wrapError } from '../broker/wrap-error.js'
import {
  InvalidOptionError,
  InvalidPayloadError,
  MessageCancelled,
  TimeLimitExceeded,
  UnknownActorError,
  WorkerShutdown,
} from '../errors.js'
import { Message } from '../message/message.js'
import { type ControlMessage, formatControl, onControl, sendControl } from '../ops/control.js'
import { pausedQueues } from '../ops/pause.js'
import type { Outcome, ProcessEvent } from '../plugin/middleware.js'
import { compareDeliveries, type Delivery } from './delivery.js'
import { Liveness } from './liveness.js'
import { Prefetch } from './prefetch.js'
import { type ProcessChain, processChain } from './process-chain.js'
import { Run } from './run.js'
import { RunSlots } from './run-slots.js'
import type { SettleEntry } from './settle.js'
import { SettleBatcher } from './settle-batcher.js'
import {
  type ResolvedWorkerOptions,
  resolveWorkerOptions,
  type WorkerOptions,
} from './worker-options.js'

/**
 * Where a worker is in its life.
 *
 * @example
 * const state: WorkerState = worker.state
 * if (state === 'running') await worker.stop()
 */
export type WorkerState = 'idle' | 'running' | 'stopping' | 'stopped'

/**
 * Counters of a worker since it started.
 *
 * @example
 * const { running, buffered, succeeded, failed }: WorkerStats = worker.stats
 * console.log(`${running} running, ${buffered} buffered, ${succeeded} ok, ${failed} failed`)
 */
export interface WorkerStats {
  /** Handlers running now. */
  readonly running: number
  /** Messages claimed and waiting for a free slot. */
  readonly buffered: number
  /** Outcomes waiting to be written. */
  readonly settling: number
  readonly succeeded: number
  readonly failed: number
}

/** Claims a worker may have in flight at once. */
const MAX_CLAIMS_IN_FLIGHT = 2
/** How long a cancellation for a message not seen yet (a claim in flight) is remembered. */
const PENDING_CANCEL_MS = 10_000

const MAX_ERROR_BACKOFF_MS = 2_000

/**
 * Runs actors: claims messages of its queues in batches sized to its free
 * slots, runs them with at most `concurrency` at a time, and records outcomes
 * in batches. Made by `broker.worker()`.
 *
 * @example
 * const worker = broker.worker({ queues: ['emails'], concurrency: 16 })
 * await worker.start()
 * worker.stopOnSignals() // SIGTERM / SIGINT: graceful stop
 */
export class Worker {
  /** This worker's id in the `workers` table. */
  readonly id = randomUUID()
  readonly #core: BrokerContext
  readonly #options: ResolvedWorkerOptions
  readonly #onStopped: () => void
  readonly #closeBroker: () => Promise<void>
  #state: WorkerState = 'idle'
  #queues: readonly string[] = []
  #queueSet: ReadonlySet<string> = new Set()
  #claimSql = ''
  #nextEtaSql = ''
  #queueParam: string | readonly string[] = ''
  #buffer: Delivery[] = []
  readonly #running: RunSlots
  readonly #chains = new Map<string, ProcessChain>()
  readonly #prefetch: Prefetch
  readonly #settler: SettleBatcher
  #liveness: Liveness | undefined
  /** Claims in flight, and the rows they may bring back. */
  #claims = 0
  #claimedAhead = 0
  #idle = false
  #wakeSeq = 0
  #idleTimer: NodeJS.Timeout | undefined
  #idleDeadline = Number.POSITIVE_INFINITY
  #errorTimer: NodeJS.Timeout | undefined
  #errorBackoffMs = 0
  #unsubscribe: (() => Promise<void> | void)[] = []
  #stopping: Promise<void> | undefined
  #drained: (() => void) | undefined
  #succeeded = 0
  #failed = 0
  /** Queues paused while this worker runs: their buffered messages go back, none starts. */
  readonly #paused = new Set<string>()
  /** Cancellations that arrived while a claim was in flight, by message id. */
  readonly #pendingCancels = new Map<string, number>()

  /** @internal Use `broker.worker()`. */
  constructor(
    core: BrokerContext,
    options: WorkerOptions,
    onStopped: () => void,
    closeBroker: () => Promise<void> = async () => {},
  ) {
    this.#core = core
    this.#closeBroker = closeBroker
    this.#options = resolveWorkerOptions(options)
    this.#onStopped = onStopped
    this.#running = new RunSlots(this.#options.concurrency)
    this.#prefetch = new Prefetch(this.#options.prefetch, this.#options.concurrency)
    this.#settler = new SettleBatcher(core, this.id, this.#options.settleBatchSize, (entries) =>
      this.#afterSettle(entries),
    )
  }

  get state(): WorkerState {
    return this.#state
  }

  /** The queues this worker consumes (known once started). */
  get queues(): readonly string[] {
    return this.#queues
  }

  get stats(): WorkerStats {
    return {
      running: this.#running.size,
      buffered: this.#buffer.length,
      settling: this.#settler.pending,
      succeeded: this.#succeeded,
      failed: this.#failed,
    }
  }

  /**
   * Registers the worker, subscribes to wake-ups and starts claiming.
   * Resolves once it runs; fails with `SchemaNotReadyError` before
   * `broker.migrate()`, or `BrokerConnectionError` when PostgreSQL is down.
   *
   * @example
   * await broker.worker({ concurrency: 8 }).start()
   */
  async start(): Promise<void> {
    if (this.#state !== 'idle')
      throw new InvalidOptionError(`Worker ${this.id} was already started`)
    this.#core.assertOpen()
    await this.#core.ready()
    const queues = this.#options.queues ?? [
      ...new Set([...this.#core.actors.values()].map((a) => a.queue)),
    ]
    if (queues.length === 0) {
      throw new InvalidOptionError(
        'Worker has no queues: declare actors before start(), or pass queues',
      )
    }
    this.#queues = queues
    this.#queueSet = new Set(queues)
    const one = queues.length === 1
    this.#claimSql = one ? this.#core.statements.claimOne : this.#core.statements.claimMany
    this.#nextEtaSql = one ? this.#core.statements.nextEtaOne : this.#core.statements.nextEtaMany
    this.#queueParam = one ? queues[0]! : queues
    const liveness = new Liveness(
      this.#core,
      this.id,
      queues,
      this.#options,
      (error) => this.#reportError(error, 'heartbeat'),
      () => this.#refresh(),
    )
    try {
      await liveness.register()
      // Subscribe before the first claim so no wake-up falls between the two.
      this.#unsubscribe.push(
        await this.#core.listener.subscribe(this.#core.statements.wakeChannel, (queue) => {
          if (this.#queueSet.has(queue)) this.#wake()
        }),
        await onControl(this.#core, (message) => this.#onControl(message)),
      )
      for (const queue of await pausedQueues(this.#core, queues)) this.#paused.add(queue)
    } catch (error) {
      throw wrapError(error, 'start a worker')
    }
    this.#unsubscribe.push(this.#core.listener.onReconnect(() => this.#wake()))
    this.#liveness = liveness
    liveness.start()
    this.#state = 'running'
    this.#core.events.emit('worker:started', {
      workerId: this.id,
      queues,
      concurrency: this.#options.concurrency,
    })
    this.#core.logger.info('worker started', {
      worker: this.id,
      queues,
      concurrency: this.#options.concurrency,
    })
    this.#pump()
  }

  /**
   * Stops gracefully: claims nothing more, returns prefetched messages to
   * the queue at once (eta and retry budget intact), lets running handlers
   * finish for up to `shutdownTimeoutMs` (then aborts their signals with
   * `WorkerShutdown` and returns their messages), writes pending outcomes and
   * deregisters. Calling it again returns the same promise.
   *
   * @example
   * await worker.stop()
   */
  stop(): Promise<void> {
    if (this.#state === 'idle') {
      this.#state = 'stopped'
      this.#onStopped()
      return Promise.resolve()
    }
    this.#stopping ??= this.#shutdown()
    return this.#stopping
  }

  /**
   * On SIGTERM or SIGINT (or the given signals), stops this worker
   * gracefully and then closes its broker (every other worker of it stops
   * too, and the pool it owns closes), so the process can exit once nothing
   * else keeps it alive. With `{ closeBroker: false }` only this worker
   * stops. Returns a function that removes the handlers.
   *
   * @example
   * await worker.start()
   * worker.stopOnSignals()
   */
  stopOnSignals(
    signals: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'],
    options: { readonly closeBroker?: boolean } = {},
  ): () => void {
    const handler = (signal: NodeJS.Signals) => {
      this.#core.logger.info('stopping on signal', { worker: this.id, signal })
      const stopped = this.stop()
      if (options.closeBroker !== false) {
        void stopped
          .then(this.#closeBroker)
          .catch((error: unknown) =>
            this.#core.logger.error('could not close the broker after a signal', { error }),
          )
      }
    }
    for (const signal of signals) process.on(signal, handler)
    return () => {
      for (const signal of signals) process.off(signal, handler)
    }
  }

  #pump(): void {
    const concurrency = this.#options.concurrency
    while (
      this.#running.size < concurrency &&
      this.#buffer.length > 0 &&
      this.#state === 'running'
    ) {
      this.#start(this.#buffer.shift()!)
    }
    if (
      this.#state !== 'running' ||
      this.#claims >= MAX_CLAIMS_IN_FLIGHT ||
      this.#idle ||
      this.#errorTimer
    )
      return
    const target = this.#prefetch.target()
    const ahead = this.#buffer.length + this.#claimedAhead
    const free = concurrency + target - this.#running.size - ahead
    if (free <= 0) return
    // Claim when slots would otherwise go unused, or when what is buffered
    // and on its way has drained to half the target; not for every freed
    // slot under load. A second claim may start while one is in flight, so
    // that handlers run while PostgreSQL prepares the next batch.
    const starving = ahead === 0 && this.#running.size < concurrency
    if (!starving && ahead > target / 2) return
    void this.#claim(free)
  }

  async #claim(limit: number): Promise<void> {
    this.#claims++
    this.#claimedAhead += limit
    const seq = this.#wakeSeq
    const claimStarted = performance.now()
    let rows: Delivery[]
    try {
      rows = await this.#core.executor.query<Delivery>(this.#claimSql, [
        this.#queueParam,
        limit,
        this.id,
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
    if (this.#core.events.has('worker:claimed')) {
      this.#core.events.emit('worker:claimed', {
        workerId: this.id,
        count: rows.length,
        limit,
        durationMs: performance.now() - claimStarted,
      })
    }
    if (this.#state !== 'running') {
      if (rows.length > 0) this.#release(rows)
      return
    }
    if (rows.length > 0) {
      const runnable = this.#screen(rows)
      this.#buffer.push(...runnable)
      this.#buffer.sort(compareDeliveries)
    }
    // Fewer than asked: nothing more is ready. Sleep, unless a wake-up came
    // while the claim was in flight.
    if (rows.length < limit && seq === this.#wakeSeq) this.#goIdle()
    this.#pump()
  }

  #goIdle(): void {
    this.#idle = true
    const seq = this.#wakeSeq
    const poll = this.#options.pollIntervalMs
    this.#core.executor
      .query<{ wait_ms: number | null }>(this.#nextEtaSql, [this.#queueParam])
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
    if (!this.#idle || seq !== this.#wakeSeq || this.#state !== 'running') return
    const deadline = performance.now() + ms
    if (this.#idleTimer && deadline >= this.#idleDeadline) return
    clearTimeout(this.#idleTimer)
    this.#idleDeadline = deadline
    this.#idleTimer = setTimeout(() => this.#wake(), ms)
  }

  #wake(): void {
    this.#wakeSeq++
    this.#idle = false
    clearTimeout(this.#idleTimer)
    this.#idleTimer = undefined
    this.#idleDeadline = Number.POSITIVE_INFINITY
    this.#pump()
  }

  #chain(actor: ActorDefinition): ProcessChain {
    let chain = this.#chains.get(actor.name)
    if (!chain) {
      chain = processChain(this.#core.middleware, actor)
      this.#chains.set(actor.name, chain)
    }
    return chain
  }

  #start(delivery: Delivery): void {
    const core = this.#core
    const actor = core.actors.get(delivery.actor)
    const run = new Run(core, delivery, actor!, this.id)
    this.#running.add(run)
    if (core.events.has('message:started')) {
      core.events.emit('message:started', {
        message: run.message,
        attempt: run.attempt,
        workerId: this.id,
        // The run's start time, already read: a clock read costs ~0.1 µs here.
        queueWaitMs: Math.max(0, performance.timeOrigin + run.startedAt - delivery.eta_ms),
      })
    }
    const invalid = actor
      ? !Array.isArray(delivery.args) ||
        typeof delivery.options !== 'object' ||
        delivery.options === null
        ? new InvalidPayloadError(
            `Message ${delivery.id} has malformed arguments or options; rejected`,
          )
        : undefined
      : new UnknownActorError(
          `Message ${delivery.id} names actor ${delivery.actor}, which this worker does not declare; rejected`,
        )
    if (invalid) {
      this.#finish(run, { kind: 'failure', error: invalid, final: true })
      return
    }
    this.#chain(actor!)(run).then(
      (outcome) => this.#finish(run, outcome),
      (error: unknown) => this.#finish(run, { kind: 'failure', error }),
    )
  }

  #finish(run: Run, result: Outcome): void {
    // A cancelled message is never retried: a failure after the request ends it.
    run.outcome = run.cancelled && result.kind === 'failure' ? { kind: 'cancelled' } : result
    if (!run.abandoned) this.#settler.add(run)
    this.#emitOutcome(run, run.outcome, performance.now() - run.startedAt)
    // Keep the slot until the handler really ends (a time limit fails the
    // attempt first), so no more than `concurrency` handlers ever run.
    const outcome = run.outcome
    if (run.handler && outcome.kind === 'failure' && TimeLimitExceeded.isInstance(outcome.error)) {
      void run.handler.then(
        () => this.#freeSlot(run),
        () => this.#freeSlot(run),
      )
    } else {
      this.#freeSlot(run)
    }
  }

  #freeSlot(run: Run): void {
    this.#running.remove(run)
    // The run now only waits for its outcome to be written, often through a
    // young-generation GC or two: drop what only the attempt needed.
    run.handler = undefined
    run.expire = undefined
    this.#prefetch.completed()
    if (this.#running.size === 0) this.#drained?.()
    this.#pump()
  }

  #emitOutcome(event: ProcessEvent, outcome: Outcome, durationMs: number): void {
    const events = this.#core.events
    const { message } = event
    if (events.has('message:finished')) {
      events.emit('message:finished', {
        message,
        outcome,
        attempt: event.attempt,
        durationMs,
        workerId: this.id,
      })
    }
    if (outcome.kind === 'success') {
      this.#succeeded++
      if (events.has('message:completed')) {
        events.emit('message:completed', { message, result: outcome.result, durationMs })
      }
    } else if (outcome.kind === 'failure') {
      this.#failed++
      events.emit('message:failed', {
        message,
        error: outcome.error,
        attempt: event.attempt,
        retryDelayMs: outcome.retryDelayMs,
      })
      if (outcome.retryDelayMs === undefined)
        events.emit('message:rejected', { message, error: outcome.error })
      else
        this.#core.logger.debug('attempt failed; will retry', {
          message: message.id,
          delayMs: outcome.retryDelayMs,
        })
    } else if (outcome.kind === 'cancelled') {
      events.emit('message:cancelled', { message })
    }
  }

  /** Returns unstarted messages to the queue, eta and retry budget intact. */
  #release(deliveries: readonly Pick<Delivery, 'id' | 'actor' | 'queue' | 'retries'>[]): void {
    for (const delivery of deliveries) {
      this.#settler.add({
        message: new Message(undefined, delivery.id, delivery.actor, delivery.queue, [], 0, {}),
        outcome: { kind: 'requeue' },
        attempt: delivery.retries + 1,
        followUps: [],
      })
    }
  }

  #afterSettle(entries: readonly SettleEntry[]): void {
    // A retry this worker scheduled: wake for it if nothing else would.
    let soonest = Number.POSITIVE_INFINITY
    for (const entry of entries) {
      if (entry.outcome.kind === 'failure' && entry.outcome.retryDelayMs !== undefined) {
        soonest = Math.min(soonest, entry.outcome.retryDelayMs)
      }
    }
    if (soonest < Number.POSITIVE_INFINITY && this.#idle)
      this.#armIdleTimer(Math.max(soonest, 1), this.#wakeSeq)
  }

  #onControl(message: ControlMessage): void {
    if (this.#state !== 'running') return
    switch (message.kind) {
      case 'pause':
        if (!this.#queueSet.has(message.queue)) return
        this.#pauseQueue(message.queue)
        void sendControl(this.#core, {
          kind: 'paused',
          workerId: this.id,
          queue: message.queue,
        }).catch((error: unknown) => this.#reportError(error, 'confirm a pause'))
        return
      case 'resume':
        if (this.#paused.delete(message.queue)) this.#wake()
        return
      case 'cancel':
        this.#cancel(message.messageId)
        return
      default:
        return
    }
  }

  /** Stops starting messages of `queue` and hands back the buffered ones. */
  #pauseQueue(queue: string): void {
    this.#paused.add(queue)
    const kept: Delivery[] = []
    const released: Delivery[] = []
    for (const delivery of this.#buffer) (delivery.queue === queue ? released : kept).push(delivery)
    this.#buffer = kept
    this.#release(released)
  }

  #cancel(id: string): void {
    const run = this.#running.find(id)
    if (run) {
      run.cancelled = true
      run.abort(new MessageCancelled(`Message ${id} was cancelled while running`))
      void sendControl(this.#core, { kind: 'cancelled', messageId: id, running: true }).catch(
        (error: unknown) => this.#reportError(error, 'answer a cancellation'),
      )
      return
    }
    const index = this.#buffer.findIndex((delivery) => delivery.id === id)
    if (index >= 0) {
      this.#buffer.splice(index, 1)
      void this.#dropCancelled([id])
    } else if (this.#claims > 0) {
      this.#pendingCancels.set(id, Date.now() + PENDING_CANCEL_MS)
    }
  }

  /** Marks never-started messages cancelled and answers their cancellers. */
  async #dropCancelled(ids: readonly string[]): Promise<void> {
    const { statements } = this.#core
    const answers = ids.map((id) =>
      formatControl({ kind: 'cancelled', messageId: id, running: false }),
    )
    try {
      await this.#core.executor.query(statements.dropCancelled, [
        ids,
        this.id,
        statements.controlChannel,
        answers,
        statements.resultChannel,
      ])
    } catch (error) {
      // Still consumed: crash recovery or the next heartbeat turns it into cancelled.
      this.#reportError(error, 'drop cancelled messages')
    }
  }

  /** Claimed rows that may start: a paused queue's go back, cancelled ones are dropped. */
  #screen(rows: Delivery[]): Delivery[] {
    if (this.#paused.size === 0 && this.#pendingCancels.size === 0) return rows
    const now = Date.now()
    for (const [id, until] of this.#pendingCancels) if (until < now) this.#pendingCancels.delete(id)
    const runnable: Delivery[] = []
    const released: Delivery[] = []
    const cancelled: string[] = []
    for (const row of rows) {
      if (this.#pendingCancels.delete(row.id)) cancelled.push(row.id)
      else if (this.#paused.has(row.queue)) released.push(row)
      else runnable.push(row)
    }
    this.#release(released)
    if (cancelled.length > 0) void this.#dropCancelled(cancelled)
    return runnable
  }

  /**
   * On each heartbeat: re-reads which queues are paused and which buffered
   * messages were cancelled, in case a notification was missed (or in
   * poll-only mode, where there are none).
   */
  async #refresh(): Promise<void> {
    if (this.#state !== 'running') return
    const paused = new Set(await pausedQueues(this.#core, this.#queues))
    for (const queue of paused) if (!this.#paused.has(queue)) this.#pauseQueue(queue)
    let resumed = false
    for (const queue of this.#paused) {
      if (!paused.has(queue)) {
        this.#paused.delete(queue)
        resumed = true
      }
    }
    if (resumed) this.#wake()
    if (this.#buffer.length === 0) return
    const rows = await this.#core.executor.query<{ id: string }>(
      this.#core.statements.cancelRequested,
      [this.#buffer.map((delivery) => delivery.id)],
    )
    for (const { id } of rows) this.#cancel(id)
  }

  #reportError(error: unknown, doing: string): void {
    const wrapped = wrapError(error, doing)
    this.#core.logger.warn(`worker could not ${doing}; retrying`, {
      worker: this.id,
      error: wrapped,
    })
    this.#core.events.emit('worker:error', { workerId: this.id, error: wrapped })
  }

  #retryAfterError(error: unknown, doing: string): void {
    this.#reportError(error, doing)
    if (this.#state !== 'running') return
    this.#errorBackoffMs = Math.min(MAX_ERROR_BACKOFF_MS, Math.max(100, this.#errorBackoffMs * 2))
    this.#errorTimer = setTimeout(() => {
      this.#errorTimer = undefined
      this.#pump()
    }, this.#errorBackoffMs)
  }

  async #shutdown(): Promise<void> {
    this.#state = 'stopping'
    this.#core.events.emit('worker:stopping', { workerId: this.id })
    clearTimeout(this.#idleTimer)
    clearTimeout(this.#errorTimer)
    this.#errorTimer = undefined
    for (const unsubscribe of this.#unsubscribe.splice(0))
      await Promise.resolve(unsubscribe()).catch(() => {})
    this.#release(this.#buffer.splice(0))
    for (const run of this.#running.values()) {
      if (run.actor?.options.notifyShutdown) run.abort(new WorkerShutdown('The worker is stopping'))
    }
    if (this.#running.size > 0) {
      const drained = new Promise<boolean>((resolve) => {
        this.#drained = () => resolve(true)
      })
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), this.#options.shutdownTimeoutMs)
      })
      const finished = await Promise.race([drained, timeout])
      clearTimeout(timer)
      if (!finished) {
        this.#core.logger.warn(
          'shutdown timeout: aborting running handlers and returning their messages',
          {
            worker: this.id,
            running: this.#running.size,
          },
        )
        for (const run of this.#running.values()) {
          run.abandoned = true
          run.abort(new WorkerShutdown('The worker stopped before this handler finished'))
        }
        this.#release(
          this.#running.values().map((run) => ({
            id: run.message.id,
            actor: run.message.actor,
            queue: run.message.queue,
            retries: run.retries,
          })),
        )
      }
    }
    let settleTimer: NodeJS.Timeout | undefined
    await Promise.race([
      this.#settler.drain(),
      new Promise<void>((resolve) => {
        settleTimer = setTimeout(resolve, Math.max(5_000, this.#options.shutdownTimeoutMs))
      }),
    ])
    clearTimeout(settleTimer)
    if (this.#settler.pending > 0) {
      this.#core.logger.warn(
        'could not record every outcome before stopping; crash recovery will requeue them',
        {
          worker: this.id,
          pending: this.#settler.pending,
        },
      )
    }
    this.#settler.abandon()
    await this.#liveness?.stop()
    this.#state = 'stopped'
    this.#core.events.emit('worker:stopped', { workerId: this.id })
    this.#core.logger.info('worker stopped', { worker: this.id })
    this.#onStopped()
  }
}

/** @internal */
export function createWorker(
  core: BrokerContext,
  options: WorkerOptions,
  onStopped: () => void,
  closeBroker: () => Promise<void>,
): Worker {
  return new Worker(core, options, onStopped, closeBroker)
}
