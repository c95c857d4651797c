import type { Executor } from '@iddqueue/schema'
import type { Statements } from '../sql/statements.js'
import type { Listener } from './listener.js'
import type { Logger } from './logger.js'

/**
 * @internal Wake-ups for the sends the broker commits itself, sent after the
 * commit instead of inside it (decision 0010).
 *
 * PostgreSQL serialises the commits of transactions that issued NOTIFY, so a
 * NOTIFY inside every send capped concurrent producers at about 40% of the
 * plain-insert rate. Here the send's own transaction notifies nobody. Its
 * queue names are handed at once to this process's own subscribers (a worker
 * in the same process starts without waiting for PostgreSQL), and to other
 * processes through one `pg_notify` statement in flight at a time: queue
 * names that arrive meanwhile are coalesced into the next one. A send inside
 * a caller's transaction still notifies inside it, so its wake-up exists only
 * if that transaction commits. Wake-ups are hints either way: a lost one is
 * covered by the workers' poll.
 */
export class Waker {
  readonly #pending = new Set<string>()
  #flushing: Promise<void> | undefined

  constructor(
    private readonly executor: Executor,
    private readonly statements: Statements,
    private readonly listener: Listener,
    private readonly logger: Logger,
  ) {}

  /** After a send committed: wakes this process's workers now and the others' soon. */
  wake(queues: Iterable<string>): void {
    for (const queue of queues) {
      this.listener.deliver(this.statements.wakeChannel, queue)
      this.#pending.add(queue)
    }
    this.#flushing ??= this.#flush()
  }

  /** Resolves once the wake-ups asked for so far have been sent (or given up). */
  async drain(): Promise<void> {
    await this.#flushing
  }

  async #flush(): Promise<void> {
    try {
      while (this.#pending.size > 0) {
        const queues = [...this.#pending]
        this.#pending.clear()
        const channel = this.statements.wakeChannel
        // This process's subscribers were woken already: drop the echo.
        const echoes = queues.map((queue) => this.listener.expectEcho(channel, queue))
        try {
          await this.executor.query(this.statements.wakeAfterCommit, [channel, queues])
        } catch (error) {
          for (const forget of echoes) forget(false)
          // A hint: the workers' poll finds the messages anyway.
          this.logger.debug('could not send wake-ups', { queues, error })
        }
      }
    } finally {
      this.#flushing = undefined
    }
  }
}
