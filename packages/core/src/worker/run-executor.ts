import type { ActorDefinition } from '../actor/actor-definition.js'
import { InvalidPayloadError, UnknownActorError } from '../errors.js'
import type { Outcome } from '../plugin/middleware-interface.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { TransactionPermits } from '../runtime/transaction-permits.js'
import type { Delivery } from './delivery.js'
import { deliveryProblem } from './delivery-shape.js'
import type { Prefetch } from './prefetch.js'
import { type ProcessChain, processChain } from './process-chain.js'
import { Run } from './run.js'
import type { RunSlots } from './run-slots.js'
import type { SettleBatcher } from './settle-batcher.js'
import { transactionalRun } from './transactional-run.js'

/**
 * @internal The worker's executor: runs a claimed message in a slot through
 * its actor's middleware chain to the handler, hands the outcome to the
 * completer, emits the outcome events and frees the slot once the handler
 * has really ended.
 */
export class RunExecutor {
  succeeded = 0
  failed = 0
  readonly #chains = new Map<string, ProcessChain>()
  #drained: (() => void) | undefined

  constructor(
    private readonly core: BrokerContext,
    private readonly workerId: string,
    private readonly slots: RunSlots,
    private readonly prefetch: Prefetch,
    private readonly settler: SettleBatcher,
    /** A slot is free again: the claim loop may start or claim more. */
    private readonly onSlotFreed: () => void,
    /** Connections this worker's transactional handlers may hold at once. */
    private readonly transactionPermits: TransactionPermits = new TransactionPermits(1),
  ) {}

  /** Resolves once no handler runs (at once if none does). */
  drained(): Promise<void> {
    if (this.slots.size === 0) return Promise.resolve()
    return new Promise((resolve) => {
      this.#drained = resolve
    })
  }

  start(delivery: Delivery): void {
    const core = this.core
    const actor = core.actors.get(delivery.actor)
    const run = new Run(core, delivery, actor!, this.workerId)
    this.slots.add(run)
    if (core.events.has('message:started')) {
      core.events.emit('message:started', {
        message: run.message,
        attempt: run.attempt,
        workerId: this.workerId,
        // The run's start time, already read: a clock read costs ~0.1 µs here.
        queueWaitMs: Math.max(0, performance.timeOrigin + run.startedAt - delivery.eta_ms),
      })
    }
    const problem = actor ? deliveryProblem(delivery) : undefined
    const invalid = actor
      ? problem === undefined
        ? undefined
        : new InvalidPayloadError(`Message ${delivery.id} is malformed (${problem}); rejected`)
      : new UnknownActorError(
          `Message ${delivery.id} names actor ${delivery.actor}, which this worker does not declare; rejected`,
        )
    if (invalid) {
      this.#finish(run, { kind: 'failure', error: invalid, final: true })
      return
    }
    const chain = this.#chain(actor!)
    const outcome = actor!.options.transactional
      ? transactionalRun(core, run, chain, this.transactionPermits)
      : chain(run)
    outcome.then(
      (outcome) => this.#finish(run, outcome),
      (error: unknown) => this.#finish(run, { kind: 'failure', error }),
    )
  }

  #chain(actor: ActorDefinition): ProcessChain {
    let chain = this.#chains.get(actor.name)
    if (!chain) {
      chain = processChain(this.core.middleware, actor)
      this.#chains.set(actor.name, chain)
    }
    return chain
  }

  #finish(run: Run, result: Outcome): void {
    // A cancelled message is never retried: a failure after the request ends it.
    run.outcome = run.cancelled && result.kind === 'failure' ? { kind: 'cancelled' } : result
    run.endProgress()
    // A transactional run that committed settled in its own transaction.
    if (!run.abandoned && !run.settled) this.settler.add(run)
    try {
      this.#emitOutcome(run, run.outcome)
    } catch {
      // A logger that throws must not keep the slot forever: the outcome is
      // already on its way to the database, which is what counts.
    }
    // Keep the slot until the handler really ends (a time limit fails the
    // attempt first), so no more than `concurrency` handlers ever run.
    if (run.handler && run.endedEarly) {
      void run.handler.then(
        () => this.#freeSlot(run),
        () => this.#freeSlot(run),
      )
    } else {
      this.#freeSlot(run)
    }
  }

  #freeSlot(run: Run): void {
    this.slots.remove(run)
    // The run now only waits for its outcome to be written, often through a
    // young-generation GC or two: drop what only the attempt needed.
    run.handler = undefined
    run.expire = undefined
    this.prefetch.completed()
    if (this.slots.size === 0) this.#drained?.()
    this.onSlotFreed()
  }

  #emitOutcome(run: Run, outcome: Outcome): void {
    const events = this.core.events
    const { message } = run
    const finished = events.has('message:finished')
    // A clock read only for a listener that wants the duration.
    const durationMs =
      finished || events.has('message:completed') ? performance.now() - run.startedAt : 0
    if (finished) {
      events.emit('message:finished', {
        message,
        outcome,
        attempt: run.attempt,
        durationMs,
        workerId: this.workerId,
      })
    }
    if (outcome.kind === 'success') {
      this.succeeded++
      if (events.has('message:completed')) {
        events.emit('message:completed', { message, result: outcome.result, durationMs })
      }
    } else if (outcome.kind === 'failure') {
      this.failed++
      events.emit('message:failed', {
        message,
        error: outcome.error,
        attempt: run.attempt,
        retryDelayMs: outcome.retryDelayMs,
      })
      if (outcome.retryDelayMs === undefined) {
        events.emit('message:rejected', { message, error: outcome.error })
        // At the default level: a message rejected for good (its handler out of
        // retries, an actor this process does not declare) would otherwise show
        // only in `iddqueue failed list`.
        this.core.logger.warn('message rejected', {
          actor: message.actor,
          queue: message.queue,
          message: message.id,
          attempt: run.attempt,
          error: outcome.error,
        })
      } else
        this.core.logger.debug('attempt failed; will retry', {
          message: message.id,
          delayMs: outcome.retryDelayMs,
        })
    } else if (outcome.kind === 'cancelled') {
      events.emit('message:cancelled', { message })
    }
  }
}
