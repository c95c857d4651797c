/**
 * One blocked wait for a key (a message id, a lock name), woken by a
 * notification that names it, or after a timeout. Made by
 * {@link NotificationWaiters.add}.
 *
 * A signal that arrives while the waiter is not blocked (between two reads)
 * is kept, and the next {@link NotificationWaiter.next} returns at once, so
 * no notification is lost between a read and the wait that follows it.
 *
 * @example
 * const waiter = await waiters.add(messageId)
 * try {
 *   while (!(await isDone(messageId))) await waiter.next(waiter.notified ? 10_000 : 100)
 * } finally {
 *   waiters.remove(waiter)
 * }
 */
export class NotificationWaiter {
  #signalled = false
  #wake: (() => void) | undefined

  constructor(
    /** What this waiter waits for. */
    readonly key: string,
    /** False when notifications cannot be relied on (no LISTEN): wait with a short timeout. */
    readonly notified: boolean,
  ) {}

  /** True while blocked in {@link NotificationWaiter.next}. */
  get blocked(): boolean {
    return this.#wake !== undefined
  }

  /** True when a signal arrived that {@link NotificationWaiter.next} has not consumed. */
  get pending(): boolean {
    return this.#signalled
  }

  /** A notification named this waiter's key: wakes it, or keeps the signal for its next wait. */
  signal(): void {
    this.#signalled = true
    this.#wake?.()
  }

  /**
   * Resolves at the next signal, or after `ms`. A signal that came since the
   * last call resolves it at once.
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
