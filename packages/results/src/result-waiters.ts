import type { Logger, PluginContext } from '@iddqueue/core'

/** @internal One blocked `message.result()`: woken by a notification for its message. */
export class Waiter {
  #signalled = false
  #wake: (() => void) | undefined

  constructor(
    readonly messageId: string,
    /** False when this waiter cannot rely on notifications and must poll. */
    readonly notified: boolean,
  ) {}

  /** @internal A notification named this message. */
  signal(): void {
    this.#signalled = true
    this.#wake?.()
  }

  /**
   * Resolves at the next notification for the message, or after `ms`. A
   * notification that came since the last call resolves it at once, so one
   * arriving between a read and this call is not lost.
   */
  next(ms: number): Promise<void> {
    if (this.#signalled) {
      this.#signalled = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      const self = this
      function done() {
        clearTimeout(timer)
        self.#wake = undefined
        self.#signalled = false
        resolve()
      }
      this.#wake = done
    })
  }
}

/**
 * @internal The blocked result waiters of one broker, woken through its
 * shared LISTEN connection: one subscription to the result channel, made
 * when the first waiter blocks and kept until the broker closes. Waiting
 * holds no pool connection. Payloads are a message id (core, when it
 * cancels a message) or comma-separated ids (this plugin, per settle batch).
 */
export class ResultWaiters {
  readonly #waiters = new Map<string, Set<Waiter>>()
  #subscription: Promise<() => Promise<void>> | undefined
  readonly #context: Pick<PluginContext, 'subscribe' | 'listening'>
  readonly #channel: string
  readonly #logger: Logger

  constructor(
    context: Pick<PluginContext, 'subscribe' | 'listening'>,
    channel: string,
    logger: Logger,
  ) {
    this.#context = context
    this.#channel = channel
    this.#logger = logger
  }

  /** Registers a waiter for `messageId`, listening first if nobody is yet. */
  async add(messageId: string): Promise<Waiter> {
    const notified = this.#context.listening && (await this.#listen())
    const waiter = new Waiter(messageId, notified)
    let set = this.#waiters.get(messageId)
    if (!set) {
      set = new Set()
      this.#waiters.set(messageId, set)
    }
    set.add(waiter)
    return waiter
  }

  remove(waiter: Waiter): void {
    const set = this.#waiters.get(waiter.messageId)
    if (!set?.delete(waiter) || set.size > 0) return
    this.#waiters.delete(waiter.messageId)
  }

  /** Stops listening (the broker is closing). */
  async close(): Promise<void> {
    const subscription = this.#subscription
    this.#subscription = undefined
    if (subscription) await (await subscription.catch(() => async () => {}))()
  }

  async #listen(): Promise<boolean> {
    this.#subscription ??= this.#context.subscribe(this.#channel, (payload) =>
      this.#notify(payload),
    )
    try {
      await this.#subscription
      return true
    } catch (error) {
      // The next waiter tries again; this one polls meanwhile.
      this.#subscription = undefined
      this.#logger.warn('results: could not listen for results; polling instead', { error })
      return false
    }
  }

  #notify(payload: string): void {
    for (const id of payload.split(',')) {
      const set = this.#waiters.get(id)
      if (set) for (const waiter of set) waiter.signal()
    }
  }
}
