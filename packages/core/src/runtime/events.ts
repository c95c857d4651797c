import type { Message } from '../message/message.js'
import type { Outcome } from '../plugin/middleware-interface.js'
import type { Logger } from './logger.js'

/**
 * Every event the broker emits, with its payload. Listeners are
 * fire-and-forget: they run after the fact, their errors are logged, and they
 * can never change what happened.
 *
 * @example
 * broker.on('message:failed', ({ message, error, retryDelayMs }) => {
 *   console.warn(`${message.actor} failed`, error, retryDelayMs === undefined ? 'rejected' : 'will retry')
 * })
 */
export interface BrokerEvents {
  /** A message was written (for a caller's transaction: before it commits). */
  'message:enqueued': { readonly message: Message }
  /** A worker started a handler. */
  'message:started': {
    readonly message: Message
    readonly attempt: number
    readonly workerId: string
    /**
     * How long the message waited to start: from its eta (the send, or the
     * end of its delay or retry backoff) to now, by this process's clock;
     * 0 when the clocks disagree.
     */
    readonly queueWaitMs: number
  }
  /** A handler returned. */
  'message:completed': {
    readonly message: Message
    readonly result: unknown
    readonly durationMs: number
  }
  /** An attempt failed; `retryDelayMs` is set when it will be retried. */
  'message:failed': {
    readonly message: Message
    readonly error: unknown
    readonly attempt: number
    readonly retryDelayMs: number | undefined
  }
  /** A message was rejected for good (retries exhausted, age limit, unknown actor, ...). */
  'message:rejected': { readonly message: Message; readonly error: unknown }
  /** A running handler's message ended cancelled, after a cancellation request. */
  'message:cancelled': { readonly message: Message }
  /**
   * A run ended, whatever its outcome: every `message:started` is followed
   * by one `message:finished` (a `requeue` outcome means it was handed back
   * without running, on pause or shutdown). A failure with `retryDelayMs`
   * will be retried; one without is rejected.
   */
  'message:finished': {
    readonly message: Message
    readonly outcome: Outcome
    readonly attempt: number
    readonly durationMs: number
    readonly workerId: string
  }
  /**
   * Crash recovery put messages of dead or unregistered workers back in
   * their queue (`state: 'queued'`), or cancelled them when a cancellation
   * was requested (`state: 'cancelled'`).
   */
  'messages:recovered': {
    readonly messages: readonly {
      readonly id: string
      readonly queue: string
      readonly state: 'queued' | 'cancelled'
    }[]
  }
  /**
   * Outcomes a worker ran to were refused: when it wrote them, the messages
   * were no longer consumed by it. Crash recovery queued them again after
   * the worker was presumed dead (a blocked event loop, a network
   * partition, a PostgreSQL outage longer than `staleAfterMs`), or they were
   * cancelled or deleted meanwhile. The outcome in the table is someone
   * else's; the refused run's own side effects happened all the same.
   * Emitted once per batch of outcomes, with one warning.
   */
  'messages:refused': {
    readonly workerId: string
    readonly messages: readonly {
      readonly id: string
      readonly queue: string
      readonly actor: string
      /** The refused outcome's kind. */
      readonly outcome: Outcome['kind']
    }[]
  }
  'worker:started': {
    readonly workerId: string
    readonly queues: readonly string[]
    /** How many handlers it runs at once. */
    readonly concurrency: number
  }
  /** A claim statement returned: `count` messages out of the `limit` asked for. */
  'worker:claimed': {
    readonly workerId: string
    readonly count: number
    readonly limit: number
    readonly durationMs: number
  }
  'worker:stopping': { readonly workerId: string }
  'worker:stopped': { readonly workerId: string }
  /** A worker hit an error it will retry (a lost connection, for example). */
  'worker:error': { readonly workerId: string; readonly error: unknown }
}

/**
 * The name of a broker event.
 *
 * @example
 * const watched: BrokerEventName[] = ['message:failed', 'message:rejected']
 * for (const event of watched) broker.on(event, (payload) => console.warn(event, payload))
 */
export type BrokerEventName = keyof BrokerEvents

/**
 * A listener of one broker event.
 *
 * @example
 * const onRejected: BrokerEventListener<'message:rejected'> = ({ message, error }) =>
 *   console.error(`${message.actor} ${message.id} rejected`, error)
 * broker.on('message:rejected', onRejected)
 */
export type BrokerEventListener<E extends BrokerEventName> = (payload: BrokerEvents[E]) => void

/** @internal A typed, fire-and-forget event bus. */
export class EventBus {
  readonly #listeners = new Map<BrokerEventName, Set<(payload: never) => void>>()

  constructor(private readonly logger: Logger) {}

  on<E extends BrokerEventName>(event: E, listener: BrokerEventListener<E>): () => void {
    let set = this.#listeners.get(event)
    if (!set) {
      set = new Set()
      this.#listeners.set(event, set)
    }
    set.add(listener as (payload: never) => void)
    return () => {
      set.delete(listener as (payload: never) => void)
    }
  }

  /** True when someone listens, so hot paths build payloads only when needed. */
  has(event: BrokerEventName): boolean {
    return (this.#listeners.get(event)?.size ?? 0) > 0
  }

  emit<E extends BrokerEventName>(event: E, payload: BrokerEvents[E]): void {
    const set = this.#listeners.get(event)
    if (!set) return
    for (const listener of set) {
      try {
        ;(listener as BrokerEventListener<E>)(payload)
      } catch (error) {
        this.logger.error(`listener of ${event} threw`, { error })
      }
    }
  }
}
