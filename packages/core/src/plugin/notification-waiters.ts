import type { Logger } from '../runtime/logger.js'
import type { PluginContext } from './iddqueue-plugin.js'
import { NotificationWaiter } from './notification-waiter.js'

/**
 * Options of {@link NotificationWaiters}.
 *
 * @example
 * const options: NotificationWaitersOptions = {
 *   onNotification: (payload, waiters) => waiters.wakeAll(payload),
 *   what: 'results',
 * }
 */
export interface NotificationWaitersOptions {
  /**
   * Routes one notification payload of the channel to the waiters it names,
   * with {@link NotificationWaiters.wakeAll} or {@link NotificationWaiters.wakeOne}.
   */
  readonly onNotification: (payload: string, waiters: NotificationWaiters) => void
  /**
   * When a waiter leaves with a signal it did not use, wake another waiter
   * of its key: for a signal meant for one waiter (a slot released), so it
   * is not lost. Default `false`.
   */
  readonly handOff?: boolean
  /** How the warning names what could not be listened for, e.g. `'results'`. */
  readonly what?: string
}

/**
 * The blocked waiters of one plugin on one notification channel, for plugin
 * authors: they are woken through the broker's shared LISTEN connection, with
 * one subscription made when the first waiter registers and kept until
 * {@link NotificationWaiters.close}. Waiting holds no pool connection. When
 * the broker cannot listen (`pollOnly`, or LISTEN failed), waiters are made
 * with `notified: false` and should wait with a short timeout.
 *
 * Register a waiter before the read whose result it waits on, so a
 * notification that lands between the read and the wait is not lost.
 *
 * @example
 * const plugin: IddqueuePlugin = {
 *   name: 'my-plugin',
 *   setup(context) {
 *     const waiters = new NotificationWaiters(context, context.namespace.channel('my_done'), context.logger, {
 *       // The payload is a comma-separated list of ids: wake every waiter of each.
 *       onNotification: (payload, all) => { for (const id of payload.split(',')) all.wakeAll(id) },
 *     })
 *     return () => waiters.close()
 *   },
 * }
 */
export class NotificationWaiters {
  readonly #waiters = new Map<string, Set<NotificationWaiter>>()
  #subscription: Promise<() => Promise<void>> | undefined
  readonly #context: Pick<PluginContext, 'subscribe' | 'listening'>
  readonly #channel: string
  readonly #logger: Logger
  readonly #options: NotificationWaitersOptions

  constructor(
    context: Pick<PluginContext, 'subscribe' | 'listening'>,
    channel: string,
    logger: Logger,
    options: NotificationWaitersOptions,
  ) {
    this.#context = context
    this.#channel = channel
    this.#logger = logger
    this.#options = options
  }

  /** Registers a waiter for `key`, listening first if nobody is yet. */
  async add(key: string): Promise<NotificationWaiter> {
    const notified = this.#context.listening && (await this.#listen())
    const waiter = new NotificationWaiter(key, notified)
    let set = this.#waiters.get(key)
    if (!set) {
      set = new Set()
      this.#waiters.set(key, set)
    }
    set.add(waiter)
    return waiter
  }

  /** Unregisters a waiter (in a `finally` after its last wait). */
  remove(waiter: NotificationWaiter): void {
    const set = this.#waiters.get(waiter.key)
    if (!set?.delete(waiter)) return
    if (set.size === 0) this.#waiters.delete(waiter.key)
    else if (this.#options.handOff && waiter.pending) this.#wakeOne(set)
  }

  /** Signals every waiter of `key`. */
  wakeAll(key: string): void {
    const set = this.#waiters.get(key)
    if (set) for (const waiter of set) waiter.signal()
  }

  /**
   * Signals one waiter of `key`: a blocked one, else the first one between
   * two tries without a signal (it then tries again at once).
   */
  wakeOne(key: string): void {
    const set = this.#waiters.get(key)
    if (set) this.#wakeOne(set)
  }

  /** Stops listening (the broker is closing). */
  async close(): Promise<void> {
    const subscription = this.#subscription
    this.#subscription = undefined
    if (subscription) await (await subscription.catch(() => async () => {}))()
  }

  async #listen(): Promise<boolean> {
    this.#subscription ??= this.#context.subscribe(this.#channel, (payload) =>
      this.#options.onNotification(payload, this),
    )
    try {
      await this.#subscription
      return true
    } catch (error) {
      // The next waiter tries again; this one polls meanwhile.
      this.#subscription = undefined
      this.#logger.warn(
        `could not listen for ${this.#options.what ?? this.#channel} notifications; polling instead`,
        { error },
      )
      return false
    }
  }

  #wakeOne(set: Set<NotificationWaiter>): void {
    let idle: NotificationWaiter | undefined
    for (const waiter of set) {
      if (waiter.blocked) {
        waiter.signal()
        return
      }
      if (!waiter.pending) idle ??= waiter
    }
    idle?.signal()
  }
}
