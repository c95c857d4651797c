import type { Executor } from '@iddqueue/schema'
import { BrokerConnectionError } from '../errors.js'

/** @internal An executor whose statements have deadlines, and that knows which are in flight. */
export interface DeadlineExecutor extends Executor {
  /**
   * Resolves once no statement or transaction sent through it is in flight
   * (each ends by its deadline at the latest), including those sent meanwhile.
   */
  settled(): Promise<void>
}

/**
 * @internal The worker's executor: every statement and transaction gets a
 * deadline, past which it fails with `BrokerConnectionError` (so the caller
 * retries it as after a lost connection) and `onTimeout` runs.
 *
 * After a terminated connection, postgres.js can leave a query pending for
 * seconds (measured: 8 to 25 of 30 for 6 to 23 s); a claim, heartbeat or
 * settle waiting on one would stall the worker. The abandoned statement may
 * still commit later: a late claim leaves rows this worker holds without
 * knowing, which is why `onTimeout` asks for a reconciliation, at the
 * deadline and again when the abandoned statement ends (a reconciliation
 * at the deadline cannot see rows a claim still running has not committed);
 * a late settle only repeats what the retry writes (settles are guarded by
 * state and worker).
 *
 * A graceful stop waits for `settled()`, so that once `worker.stop()`
 * resolves the worker sends nothing more and the caller may end its pool.
 *
 * @example
 * const executor = deadlineExecutor(core.executor, 15_000, () => reconciler.request())
 */
export function deadlineExecutor(
  executor: Executor,
  timeoutMs: number,
  onTimeout: (what: string) => void,
): DeadlineExecutor {
  const inFlight = new Set<Promise<unknown>>()
  const within = <T>(work: Promise<T>, what: string): Promise<T> => {
    let timer: NodeJS.Timeout | undefined
    let abandoned = false
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abandoned = true
        onTimeout(what)
        reject(
          new BrokerConnectionError(
            `PostgreSQL did not answer ${what} within ${timeoutMs} ms (queryTimeoutMs)`,
          ),
        )
      }, timeoutMs)
    })
    const late = () => {
      if (abandoned) onTimeout(`${what} that answered after its deadline`)
    }
    work.then(late, late)
    const guarded = Promise.race([work, expired]).finally(() => clearTimeout(timer))
    const done: Promise<unknown> = guarded.then(
      () => inFlight.delete(done),
      () => inFlight.delete(done),
    )
    inFlight.add(done)
    return guarded
  }
  return {
    inTransaction: executor.inTransaction,
    query<Row>(text: string, params?: readonly unknown[]): Promise<Row[]> {
      return within(executor.query<Row>(text, params), 'a statement')
    },
    // The statements inside run on the transaction's own connection, under
    // the deadline of the whole transaction.
    transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
      return within(executor.transaction(fn), 'a transaction')
    },
    async settled(): Promise<void> {
      while (inFlight.size > 0) await Promise.all(inFlight)
    },
  }
}
