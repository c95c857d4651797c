import type { ActorDefinition } from '../actor/actor-definition.js'
import type { ActorReference } from '../actor/actor-options.js'
import { type PreparedEntry, prepareEntry } from '../enqueue/prepared-entry.js'
import { Message } from '../message/message.js'
import type { Outcome, ProcessEvent } from '../plugin/middleware-interface.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import type { Delivery } from './delivery.js'
import { type MessageForOptions, messageFor } from './message-for.js'
import { ProgressReporter } from './progress-reporter.js'
import type { SettleEntry } from './settle-batch.js'

const NO_FOLLOW_UPS: readonly PreparedEntry[] = Object.freeze([])
const PENDING: Outcome = Object.freeze({ kind: 'requeue' })

/**
 * @internal One delivery of a message to its handler. It is at once the
 * event middleware sees, the worker's record of a running message, and the
 * entry the settle batcher writes: one object per message, with its
 * behaviour on the prototype, because the worker makes tens of thousands of
 * them a second.
 */
export class Run implements ProcessEvent, SettleEntry {
  readonly message: Message
  readonly attempt: number
  readonly retries: number
  readonly ageMs: number
  readonly startedAt = performance.now()
  /** Set when the outcome is known. */
  outcome: Outcome = PENDING
  followUps: readonly PreparedEntry[] = NO_FOLLOW_UPS
  /** A graceful stop gave up waiting: the outcome is no longer recorded. */
  abandoned = false
  /** Cancelled while running: a failure then ends as cancelled, never retried. */
  cancelled = false
  /** The handler's own promise: the worker keeps the slot until it ends. */
  handler: Promise<unknown> | undefined = undefined
  /** Ends the attempt at once (the time limit), whatever the handler does. */
  expire: ((error: unknown) => void) | undefined = undefined
  /** The worker's slot this run occupies while it runs (see `RunSlots`), else -1. */
  slot = -1
  #controller: AbortController | undefined = undefined
  #progress: ProgressReporter | undefined = undefined

  constructor(
    private readonly core: BrokerContext,
    delivery: Delivery,
    readonly actor: ActorDefinition,
    readonly workerId: string,
  ) {
    this.message = new Message(
      core.host,
      delivery.id,
      delivery.actor,
      delivery.queue,
      delivery.args,
      delivery.priority,
      delivery.options,
    )
    this.attempt = delivery.retries + 1
    this.retries = delivery.retries
    this.ageMs = delivery.age_ms
  }

  get signal(): AbortSignal {
    this.#controller ??= new AbortController()
    return this.#controller.signal
  }

  abort(reason: unknown): void {
    this.#controller ??= new AbortController()
    this.#controller.abort(reason)
  }

  /** `ctx.progress(value)`: throttled, size-limited, written while the attempt runs. */
  reportProgress(value: unknown): Promise<void> {
    this.#progress ??= new ProgressReporter(this.core, this.message.id, this.workerId)
    return this.#progress.report(value)
  }

  /** The attempt ended: no more progress writes; the settle writes {@link progress}. */
  endProgress(): void {
    this.#progress?.stop()
  }

  /** The last progress reported, as JSON, for the settle. */
  get progress(): string | undefined {
    return this.#progress?.latest
  }

  enqueueAfter(message: Message, options?: { readonly delayMs?: number }): void {
    const entry = prepareEntry(
      this.#inherit(message),
      options ?? {},
      this.core.maxPayloadBytes,
      `message for ${message.actor} after ${this.message.actor}`,
    )
    this.followUps = [...this.followUps, entry]
  }

  /** The follow-up with the option keys plugins want carried over from this run's message. */
  #inherit(message: Message): Message {
    let inherited: Record<string, unknown> | undefined
    for (const key of this.core.inheritedOptions) {
      if (key in this.message.options && !(key in message.options)) {
        inherited ??= { ...message.options }
        inherited[key] = this.message.options[key]
      }
    }
    return inherited ? message.with({ options: inherited }) : message
  }

  messageFor(
    reference: ActorReference,
    args: readonly unknown[],
    options?: MessageForOptions,
  ): Message {
    return messageFor(this.core, reference, args, options)
  }
}
