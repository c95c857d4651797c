import { IddqueueError } from '@iddqueue/schema'

const DEFAULT_WAIT_MS = 10_000

/**
 * What a plugin keeps from its `setup()`, for methods that may be called
 * before a broker has set the plugin up: {@link SetupLatch.wait} waits for
 * `set()` (a broker sets its plugins up on its first operation), and fails
 * with a clear error when no broker does so in time.
 *
 * @example
 * // Executor comes from @iddqueue/schema
 * const latch = new SetupLatch<{ executor: Executor }>('myPlugin()')
 * const plugin: IddqueuePlugin = {
 *   name: 'my-plugin',
 *   setup(context) {
 *     latch.set({ executor: context.executor })
 *     return () => latch.clear()
 *   },
 * }
 * async function report() {
 *   const { executor } = await latch.wait('build a report') // throws after 10 s without a broker
 *   return executor.query('select 1')
 * }
 */
export class SetupLatch<T> {
  #value: T | undefined
  #resolve!: (value: T) => void
  #ready!: Promise<T>

  /**
   * @param plugin How errors name the plugin, e.g. `'results()'`.
   * @param waitMs How long {@link SetupLatch.wait} waits for a broker (10 s).
   */
  constructor(
    private readonly plugin: string,
    private readonly waitMs = DEFAULT_WAIT_MS,
  ) {
    this.clear()
  }

  /** The value once set up, or `undefined` (hooks use this: they run only after setup). */
  get current(): T | undefined {
    return this.#value
  }

  /** Records the setup and releases every waiter. */
  set(value: T): void {
    this.#value = value
    this.#resolve(value)
  }

  /** Forgets the setup (on teardown), so later calls wait for the next broker. */
  clear(): void {
    this.#value = undefined
    this.#ready = new Promise<T>((resolve) => {
      this.#resolve = resolve
    })
  }

  /**
   * The setup, waiting for a broker to set the plugin up if none has yet.
   *
   * @param doing What the caller is doing, for the error: `'purge results'`.
   * @throws IddqueueError when no broker sets the plugin up within the wait.
   */
  async wait(doing: string): Promise<T> {
    if (this.#value !== undefined) return this.#value
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new IddqueueError(
              `Could not ${doing}: ${this.plugin} was not set up by a broker within ${this.waitMs} ms; pass it in createBroker({ plugins }) and call broker.ready() (or send, or start a worker) first`,
            ),
          ),
        this.waitMs,
      )
    })
    try {
      return await Promise.race([this.#ready, timeout])
    } finally {
      clearTimeout(timer)
    }
  }
}
