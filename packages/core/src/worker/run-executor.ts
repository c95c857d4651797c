import type { ActorDefinition } from '../actor/actor-definition.js'
import { InvalidPayloadError, TimeLimitExceeded, UnknownActorError } from '../errors.js'
import type { Outcome } from '../plugin/middleware-interface.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import type { Delivery } from './delivery.js'
import type { Prefetch } from './prefetch.js'
import { type ProcessChain, processChain } from './process-chain.js'
import { Run } from './run.js'
import type { RunSlots } from './run-slots.js'
import type { SettleBatcher } from './settle-batcher.js'

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
    if (!run.abandoned) this.settler.add(run)
    this.#emitOutcome(run, run.outcome)
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
      if (outcome.retryDelayMs === undefined)
        events.emit('message:rejected', { message, error: outcome.error })
      else
        this.core.logger.debug('attempt failed; will retry', {
          message: message.id,
          delayMs: outcome.retryDelayMs,
        })
    } else if (outcome.kind === 'cancelled') {
      events.emit('message:cancelled', { message })
    }
  }
}
