import type { BrokerContext } from '../runtime/broker-context.js'

/** @internal What the reconciler needs from the rest of the worker. */
export interface ReconcilerHooks {
  isRunning(): boolean
  /** Ids of the messages the worker runs, buffers or has outcomes pending for. */
  held(): Iterable<string>
  /** Holds claims back until the returned function is called, once none is in flight. */
  pauseClaims(): Promise<() => void>
  reportError(error: unknown, doing: string): void
}

/**
 * @internal After any lost connection, server restart or abandoned
 * statement, puts back in the queue the messages the database says this
 * worker holds but that it is not running, buffering or settling (see
 * `sql/reconcile.ts`). Without it, an acknowledgement lost in a PostgreSQL
 * crash left its message `consumed` by a live worker until that worker
 * stopped.
 *
 * Claims are held back while it runs: a claim that committed but whose rows
 * have not reached the buffer yet would look like rows the worker lost.
 * Requests while one runs coalesce into one more run after it; a failed
 * run is kept pending and retried on the next request (every heartbeat
 * while PostgreSQL is away).
 */
export class Reconciler {
  #pending = false
  #requests = 0
  #running: Promise<void> | undefined

  constructor(
    private readonly core: BrokerContext,
    private readonly workerId: string,
    private readonly hooks: ReconcilerHooks,
  ) {}

  /** True while a reconciliation is owed (requested and not yet done). */
  get pending(): boolean {
    return this.#pending
  }

  /** Asks for a reconciliation; resolves when the one that covers this request ends. */
  request(): Promise<void> {
    this.#pending = true
    this.#requests++
    if (this.#running) return this.#running
    const covered = this.#requests
    this.#running = this.#run().finally(() => {
      this.#running = undefined
      // A request that came while this one ran may concern rows it could not
      // see: run once more. A failure alone waits for the next request.
      if (this.#requests > covered && this.hooks.isRunning()) void this.request()
    })
    return this.#running
  }

  /** Runs one if one is owed (a previous attempt failed). */
  retryIfPending(): Promise<void> {
    return this.#pending ? this.request() : Promise.resolve()
  }

  async #run(): Promise<void> {
    if (!this.hooks.isRunning()) return
    const resume = await this.hooks.pauseClaims()
    this.#pending = false
    try {
      const { statements } = this.core
      const rows = await this.core.executor.query<{ id: string; queue: string; state: string }>(
        statements.reconcile,
        [this.workerId, [...this.hooks.held()], statements.wakeChannel],
      )
      if (rows.length > 0) {
        this.core.logger.warn(
          'after a lost connection, PostgreSQL said this worker held messages it was not running; they were queued again and may run twice',
          { worker: this.workerId, messages: rows.length },
        )
      }
    } catch (error) {
      this.#pending = true
      this.hooks.reportError(error, 'reconcile its messages after a lost connection')
    } finally {
      resume()
    }
  }
}
