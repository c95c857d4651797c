import type { Executor, FailureRecord, MessageState } from '@iddqueue/schema'
import type { ActorDefinition } from '../actor/actor-definition.js'
import type { ActorReference } from '../actor/actor-options.js'
import type { Message } from '../message/message.js'

/**
 * What a handler run came to. Middleware may replace it on the way out.
 *
 * @example
 * const skipDisabled: Middleware = {
 *   async process(event, next): Promise<Outcome> {
 *     if (event.message.options.disabled === true) return { kind: 'success', result: null }
 *     return next()
 *   },
 * }
 */
export type Outcome =
  | { readonly kind: 'success'; readonly result: unknown }
  | {
      readonly kind: 'failure'
      readonly error: unknown
      /** Set by the retry policy: retry after this delay. Unset: reject. */
      readonly retryDelayMs?: number
      /** Never retry this failure (age limit, unknown actor, `throws`). */
      readonly final?: boolean
      /** The retry budget ran out on this failure. */
      readonly exhausted?: boolean
    }
  /**
   * Not run, or run and handed back: back to the queue with its retry
   * budget (pause, shutdown, a rate limit). Its eta is kept, or with
   * `delayMs` set to that many ms from now; the attempt is not counted.
   */
  | { readonly kind: 'requeue'; readonly delayMs?: number }
  /** Not run, or stopped: the message was cancelled. */
  | { readonly kind: 'cancelled' }

/**
 * Fields of a message being enqueued.
 *
 * @example
 * const countWrites: Middleware = {
 *   async enqueue(event: EnqueueEvent, next) {
 *     await next()
 *     console.log(`${event.messages.length} written${event.transactional ? ', not committed yet' : ''}`)
 *   },
 * }
 */
export interface EnqueueEvent {
  /** The messages about to be written (duplicates already removed). */
  readonly messages: readonly Message[]
  /** The connection or transaction the write runs on. */
  readonly executor: Executor
  /** True inside a caller's transaction: the write is not committed yet after `next()`. */
  readonly transactional: boolean
  /**
   * Adds message options to every message of this write that does not
   * already have them, stored by the same statement as the messages. Call
   * it before `next()`. The tracing plugin writes the producer's trace
   * context this way.
   *
   * @example
   * const stamp: Middleware = {
   *   enqueue(event, next) {
   *     event.addOptions({ sentBy: process.pid })
   *     return next()
   *   },
   * }
   */
  addOptions(options: Readonly<Record<string, unknown>>): void
}

/**
 * A message being processed by a worker.
 *
 * @example
 * const warnOnRetries: Middleware = {
 *   process(event: ProcessEvent, next) {
 *     if (event.retries >= 3) console.warn(`${event.actor.name} ${event.message.id}: attempt ${event.attempt}`)
 *     return next()
 *   },
 * }
 */
export interface ProcessEvent {
  readonly message: Message
  readonly actor: ActorDefinition
  /** 1 on the first attempt; retries add one. */
  readonly attempt: number
  /** Failed attempts so far that were retried. */
  readonly retries: number
  /** Milliseconds since the message was first enqueued (PostgreSQL's clock, at claim). */
  readonly ageMs: number
  readonly workerId: string
  /** The handler's signal. */
  readonly signal: AbortSignal
  /** Aborts the handler's signal with `reason` (time limit, shutdown, cancellation). */
  abort(reason: unknown): void
  /**
   * Sends `message` in the same transaction that settles this one (after the
   * handler returns), so the follow-up exists exactly when the outcome is
   * recorded. Callbacks and pipeline steps use this.
   */
  enqueueAfter(message: Message, options?: { readonly delayMs?: number }): void
  /**
   * Builds a message for another actor (declared here or not: its queue is
   * the declared one, else `'default'`), for {@link ProcessEvent.enqueueAfter}.
   */
  messageFor(
    actor: ActorReference,
    args: readonly unknown[],
    options?: {
      readonly id?: string
      readonly queue?: string
      readonly priority?: number
      readonly options?: Readonly<Record<string, unknown>>
    },
  ): Message
}

/**
 * A message whose outcome was just recorded.
 *
 * @example
 * const rejections: Middleware = {
 *   async settle(event) {
 *     const rejected = event.settled.filter((s: SettledMessage) => s.state === 'rejected')
 *     for (const s of rejected) console.warn(s.message.id, s.failure?.type)
 *   },
 * }
 */
export interface SettledMessage {
  readonly message: Message
  readonly outcome: Outcome
  /** The state written. */
  readonly state: MessageState
  readonly attempt: number
  /** The failure recorded, when the attempt failed. */
  readonly failure: FailureRecord | undefined
}

/**
 * A batch of outcomes, recorded in one transaction.
 *
 * @example
 * const countDone: Middleware = {
 *   async settle(event: SettleEvent) {
 *     const done = event.settled.filter((s) => s.state === 'done').length
 *     await event.executor.query('update app.counters set done = done + $1', [done])
 *   },
 * }
 */
export interface SettleEvent {
  /** Only the messages this worker still held; a message recovered elsewhere is not here. */
  readonly settled: readonly SettledMessage[]
  /** The settle transaction: writes here commit together with the outcomes. */
  readonly executor: Executor
}

/**
 * Rejected messages being put back in their queue by `broker.retryFailed()`.
 *
 * @example
 * const logRetries: Middleware = {
 *   async revive(event: ReviveEvent) {
 *     console.log('retrying', event.messageIds)
 *   },
 * }
 */
export interface ReviveEvent {
  /** The messages revived: queued again with their ids, arguments and options. */
  readonly messageIds: readonly string[]
  /** The retry's transaction: writes here commit together with it. */
  readonly executor: Executor
}

/**
 * Hooks around the three moments of a message's life. Each is optional. The
 * first middleware in the list is the outermost.
 *
 * @example
 * const timing: Middleware = {
 *   async process(event, next) {
 *     const started = performance.now()
 *     const outcome = await next()
 *     console.log(event.message.actor, outcome.kind, performance.now() - started)
 *     return outcome
 *   },
 * }
 */
export interface Middleware {
  /**
   * Return false to leave an actor's messages alone: the `process` hook is
   * then left out of that actor's chain, and the `settle` hook does not run
   * for a batch made only of that actor's successes (a batch with a failure
   * or a cancellation still runs it). Both save work on the hot path.
   */
  forActor?(actor: ActorDefinition): boolean
  /**
   * Return true for the messages whose outcomes the `settle` hook needs.
   * When given, the hook runs only for a batch holding at least one such
   * message (whatever the outcomes), instead of what `forActor` decides: a
   * plugin that follows marked messages of any actor (group members) then
   * leaves every other batch a plain acknowledgement.
   *
   * @example
   * const groupsOnly: Middleware = {
   *   settleFor: (message) => typeof message.options.groupId === 'string',
   *   async settle(event) {
   *     // only batches with a grouped message get here
   *   },
   * }
   */
  settleFor?(message: Message): boolean
  /** Wraps a write of messages; throw to refuse it. */
  enqueue?(event: EnqueueEvent, next: () => Promise<void>): Promise<void>
  /** Wraps running a message; return without calling `next` to skip the handler. */
  process?(event: ProcessEvent, next: () => Promise<Outcome>): Promise<Outcome>
  /**
   * Runs inside the settle transaction, after the outcomes are written. It
   * must not fail for reasons of data (check and encode in `process`): a
   * failure here fails the whole batch, which is then retried.
   */
  settle?(event: SettleEvent): Promise<void>
  /**
   * Runs inside the transaction that puts rejected messages back in their
   * queue (`broker.retryFailed()`), after their rows are reset: a plugin
   * clears what it kept of the old run (the results plugin, the old result).
   * Throwing rolls the retry back.
   *
   * @example
   * const forgetResults: Middleware = {
   *   async revive({ messageIds, executor }) {
   *     await executor.query('delete from app.results where message_id = any($1::uuid[])', [messageIds])
   *   },
   * }
   */
  revive?(event: ReviveEvent): Promise<void>
}
