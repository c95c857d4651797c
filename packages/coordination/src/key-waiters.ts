import type { Logger, PluginContext } from '@iddqueue/core'

/** @internal One blocked acquire or barrier wait, woken by a notification for its key. */
export class KeyWaiter {
  #signalled = false
  #wake: (() => void) | undefined

  constructor(
    readonly key: string,
    /** False when notifications cannot be relied on: the waiter rechecks on a short poll. */
    readonly notified: boolean,
  ) {}

  /** @internal True while blocked in {@link KeyWaiter.next}. */
  get blocked(): boolean {
    return this.#wake !== undefined
  }

  /** @internal True when a signal arrived that {@link KeyWaiter.next} has not consumed. */
  get pending(): boolean {
    return this.#signalled
  }

  /** @internal A notification named this key. */
  signal(): void {
    this.#signalled = true
    this.#wake?.()
  }

  /**
   * Resolves at the next notification for the key, or after `ms`. A
   * notification that came since the last call resolves it at once, so one
   * arriving between a try and this call is not lost.
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
 * @internal The blocked waiters of one broker, woken through its shared
 * LISTEN connection: one subscription to the coordination channel, made
 * when the first waiter blocks and kept until the broker closes. Waiting
 * holds no pool connection.
 *
 * A payload is `one:<key>` (a slot was released: wake one waiter of the
 * key, as only one can take it) or `all:<key>` (a barrier opened: wake
 * every waiter). A woken waiter that leaves without using its signal hands
 * it on, so a release is not lost inside the process.
 */
export class KeyWaiters {
  readonly #waiters = new Map<string, Set<KeyWaiter>>()
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

  /** Registers a waiter for `key`, listening first if nobody is yet. */
  async add(key: string): Promise<KeyWaiter> {
    const notified = this.#context.listening && (await this.#listen())
    const waiter = new KeyWaiter(key, notified)
    let set = this.#waiters.get(key)
    if (!set) {
      set = new Set()
      this.#waiters.set(key, set)
    }
    set.add(waiter)
    return waiter
  }

  remove(waiter: KeyWaiter): void {
    const set = this.#waiters.get(waiter.key)
    if (!set?.delete(waiter)) return
    if (set.size === 0) this.#waiters.delete(waiter.key)
    else if (waiter.pending) this.#wakeOne(set)
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
      this.#logger.warn('coordination: could not listen for releases; polling instead', {
        error,
      })
      return false
    }
  }

  #notify(payload: string): void {
    const colon = payload.indexOf(':')
    const set = this.#waiters.get(payload.slice(colon + 1))
    if (!set) return
    if (payload.startsWith('all:')) for (const waiter of set) waiter.signal()
    else this.#wakeOne(set)
  }

  #wakeOne(set: Set<KeyWaiter>): void {
    let idle: KeyWaiter | undefined
    for (const waiter of set) {
      if (waiter.blocked) {
        waiter.signal()
        return
      }
      if (!waiter.pending) idle ??= waiter
    }
    // Everyone is between tries: the first without a signal retries at once.
    idle?.signal()
  }
}
