import { randomUUID } from 'node:crypto'
import { InvalidOptionError, InvalidStateError } from '../errors.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { TransactionPermits } from '../runtime/transaction-permits.js'
import { wrapError } from '../runtime/wrap-error.js'
import { ClaimLoop } from './claim-loop.js'
import { type DeadlineExecutor, deadlineExecutor } from './deadline-executor.js'
import { Heartbeat } from './heartbeat.js'
import { Prefetch } from './prefetch.js'
import { Reconciler } from './reconciler.js'
import { type Releasable, release } from './release.js'
import { Rescuer } from './rescuer.js'
import { RunExecutor } from './run-executor.js'
import { RunSlots } from './run-slots.js'
import { SettleBatcher } from './settle-batcher.js'
import { shutdown } from './shutdown.js'
import { transactionalConcurrency } from './transactional-concurrency.js'
import { WorkerControl } from './worker-control.js'
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
  readonly #slots: RunSlots
  readonly #settler: SettleBatcher
  readonly #loop: ClaimLoop
  readonly #executor: RunExecutor
  readonly #control: WorkerControl
  readonly #reconciler: Reconciler
  /** The broker's context with a deadline on every statement (see deadline-executor.ts). */
  readonly #guarded: BrokerContext
  /** The guarded context's executor: a stop waits for its statements in flight. */
  readonly #statements: DeadlineExecutor
  #heartbeat: Heartbeat | undefined
  readonly #unsubscribe: (() => Promise<void> | void)[] = []
  #stopping: Promise<void> | undefined

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
    const { concurrency } = this.#options
    // Handlers' own work (follow-up sends, plugin calls) keeps the broker's
    // executor; the worker's bookkeeping gets deadlines.
    this.#statements = deadlineExecutor(core.executor, this.#options.queryTimeoutMs, () => {
      void this.#reconciler.request()
    })
    const guarded: BrokerContext = Object.create(core, { executor: { value: this.#statements } })
    this.#guarded = guarded
    this.#slots = new RunSlots(concurrency)
    const prefetch = new Prefetch(this.#options.prefetch, concurrency)
    this.#settler = new SettleBatcher(guarded, this.id, this.#options.settleBatchSize, (entries) =>
      this.#loop.afterSettle(entries),
    )
    const isRunning = () => this.#state === 'running'
    const releaseRows = (rows: readonly Releasable[]) => release(this.#settler, rows)
    const reportError = (error: unknown, doing: string) => this.#reportError(error, doing)
    const transactional = transactionalConcurrency(
      core,
      concurrency,
      this.#options.transactionalConcurrency,
      this.#options.queues,
    )
    this.#executor = new RunExecutor(
      core,
      this.id,
      this.#slots,
      prefetch,
      this.#settler,
      () => this.#loop.pump(),
      new TransactionPermits(transactional),
    )
    this.#loop = new ClaimLoop(guarded, this.id, this.#options, this.#slots, prefetch, {
      isRunning,
      start: (delivery) => this.#executor.start(delivery),
      screen: (rows) => this.#control.screen(rows),
      release: releaseRows,
      reportError,
    })
    this.#control = new WorkerControl(guarded, this.id, this.#loop, this.#slots, {
      isRunning,
      release: releaseRows,
      reportError,
    })
    this.#reconciler = new Reconciler(guarded, this.id, {
      isRunning,
      held: () => this.#held(),
      pauseClaims: () => this.#loop.pause(),
      reportError,
    })
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
      running: this.#slots.size,
      buffered: this.#loop.buffer.length,
      settling: this.#settler.pending,
      succeeded: this.#executor.succeeded,
      failed: this.#executor.failed,
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
    if (this.#state !== 'idle') throw new InvalidStateError(`Worker ${this.id} was already started`)
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
    // Actors declared after worker() are checked here, with the queues known.
    transactionalConcurrency(
      this.#core,
      this.#options.concurrency,
      this.#options.transactionalConcurrency,
      queues,
    )
    this.#queues = queues
    const queueSet = new Set(queues)
    this.#loop.configure(queues)
    const rescuer = new Rescuer(this.#guarded, this.id, this.#options)
    const heartbeat = new Heartbeat(
      this.#guarded,
      this.id,
      queues,
      this.#options,
      (error) => this.#reportError(error, 'heartbeat'),
      async () => {
        await this.#reconciler.retryIfPending()
        await this.#control.refresh()
        await rescuer.tick()
      },
      () => this.#afterReconnect(),
    )
    try {
      await heartbeat.register()
      // Subscribe before the first claim so no wake-up falls between the two.
      this.#unsubscribe.push(
        await this.#core.listener.subscribe(this.#core.statements.wakeChannel, (queue) => {
          if (queueSet.has(queue)) this.#loop.wake()
        }),
        await this.#control.subscribe(queues),
      )
    } catch (error) {
      throw wrapError(error, 'start a worker')
    }
    this.#unsubscribe.push(this.#core.listener.onReconnect(() => void this.#afterReconnect()))
    this.#heartbeat = heartbeat
    heartbeat.start()
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
    this.#loop.pump()
  }

  /**
   * Stops gracefully: claims nothing more, returns prefetched messages to
   * the queue at once (eta and retry budget intact), lets running handlers
   * finish for up to `shutdownTimeoutMs` (then aborts their signals with
   * `WorkerShutdown` and returns their messages), writes pending outcomes and
   * deregisters. Resolves once none of the worker's statements is in flight
   * (a claim still running returns its rows first), so the application may
   * then close the broker and end its pool. Calling it again returns the
   * same promise.
   *
   * @example
   * await worker.stop()
   * await broker.close()
   * await sql.end() // or kysely.destroy(): the pool the broker was given
   */
  stop(): Promise<void> {
    if (this.#state === 'idle') {
      this.#state = 'stopped'
      this.#onStopped()
      return Promise.resolve()
    }
    this.#stopping ??= this.#stop()
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

  async #stop(): Promise<void> {
    this.#state = 'stopping'
    this.#core.events.emit('worker:stopping', { workerId: this.id })
    await shutdown({
      core: this.#core,
      workerId: this.id,
      options: this.#options,
      loop: this.#loop,
      slots: this.#slots,
      executor: this.#executor,
      settler: this.#settler,
      heartbeat: this.#heartbeat,
      unsubscribe: this.#unsubscribe,
      release: (rows) => release(this.#settler, rows),
      statementsSettled: () => this.#statements.settled(),
    })
    this.#state = 'stopped'
    this.#core.events.emit('worker:stopped', { workerId: this.id })
    this.#core.logger.info('worker stopped', { worker: this.id })
    this.#onStopped()
  }

  /**
   * PostgreSQL answers again (the LISTEN connection is back, or a heartbeat
   * succeeded after failing or found the server restarted): claim and write
   * outcomes now rather than after their backoff, and reconcile what the
   * database says this worker holds with what it really holds.
   */
  async #afterReconnect(): Promise<void> {
    if (this.#state !== 'running') return
    this.#loop.wake()
    this.#settler.retryNow()
    await this.#reconciler.request()
  }

  /** Every message this worker runs, buffers or has an outcome pending for. */
  *#held(): Generator<string> {
    for (const run of this.#slots.values()) yield run.message.id
    for (const delivery of this.#loop.buffer) yield delivery.id
    yield* this.#settler.heldIds()
  }

  #reportError(error: unknown, doing: string): void {
    const wrapped = wrapError(error, doing)
    this.#core.logger.warn(`worker could not ${doing}; retrying`, {
      worker: this.id,
      error: wrapped,
    })
    this.#core.events.emit('worker:error', { workerId: this.id, error: wrapped })
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
