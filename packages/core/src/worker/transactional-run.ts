import { WorkerShutdown } from '../errors.js'
import { decide } from '../middleware/retries.js'
import type { Outcome } from '../plugin/middleware-interface.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import type { TransactionPermits } from '../runtime/transaction-permits.js'
import { ASYNC_COMMIT } from '../sql/async-commit.js'
import { transactionalGuardSql } from '../sql/transactional-guard.js'
import type { ProcessChain } from './process-chain.js'
import { reportRefused } from './refused-outcomes.js'
import type { Run } from './run.js'
import { settleInTransaction, settleStatementFor } from './settle-batch.js'

/**
 * Thrown inside the transaction to roll it back; carries the outcome to
 * record instead, or none with the outcome the guard refused.
 */
class Rollback {
  constructor(
    readonly outcome: Outcome | undefined,
    readonly refused?: Outcome,
  ) {}
}

interface Statements {
  readonly guard: string
  /**
   * A settle statement (core's, or with the plugins' clauses) without its
   * `synchronous_commit = off`: the handler's writes commit durably.
   */
  readonly durable: Map<string, string>
}

const statements = new WeakMap<BrokerContext, Statements>()

function statementsFor(core: BrokerContext): Statements {
  let built = statements.get(core)
  if (built === undefined) {
    built = { guard: transactionalGuardSql(core.ns), durable: new Map() }
    statements.set(core, built)
  }
  return built
}

function durableSettle(core: BrokerContext, run: Run): string {
  const { durable } = statementsFor(core)
  const statement = settleStatementFor(core, [run])
  let sql = durable.get(statement)
  if (sql === undefined) {
    sql = statement.replaceAll(ASYNC_COMMIT, 'true')
    durable.set(statement, sql)
  }
  return sql
}

/**
 * Resolves with a failure when the run's signal aborts for a reason that
 * must end the transaction: the time limit, a cancellation, or a graceful
 * stop that gave up waiting. The notice of a graceful stop
 * (`notifyShutdown`) does not: the handler may still finish and commit.
 */
function abortion(run: Run): { promise: Promise<Outcome>; dispose(): void } {
  const signal = run.signal
  let onAbort: (() => void) | undefined
  const promise = new Promise<Outcome>((resolve) => {
    onAbort = () => {
      const reason: unknown = signal.reason
      if (WorkerShutdown.isInstance(reason) && !run.abandoned) return
      resolve({ kind: 'failure', error: reason })
    }
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort)
  })
  return {
    promise,
    dispose: () => signal.removeEventListener('abort', onAbort!),
  }
}

/**
 * @internal Runs a transactional actor's message: takes a connection
 * permit (the worker's, then the broker's), opens a transaction on its own
 * connection, runs the middleware chain and handler with `ctx.transaction`,
 * then settles the message in that same transaction: the guard (still
 * consumed by this worker, not cancelled), the settle statement, follow-up
 * messages and the plugins' settle hooks. Commits, and marks the run
 * settled so the batcher writes nothing.
 *
 * Anything else rolls back: a failure, a time limit, a cancellation or an
 * abandoned run returns its outcome for the batcher to record in a
 * separate short transaction; a message that is no longer this worker's is
 * logged and left to its new owner; an error while settling or committing
 * is a failed attempt under the retry policy (if the commit did happen, the
 * batcher's guarded write finds the message done and changes nothing).
 */
export async function transactionalRun(
  core: BrokerContext,
  run: Run,
  chain: ProcessChain,
  workerPermits: TransactionPermits,
): Promise<Outcome> {
  await workerPermits.acquire()
  try {
    await core.transactionPermits.acquire()
    try {
      return await attempt(core, run, chain)
    } finally {
      core.transactionPermits.release()
    }
  } finally {
    workerPermits.release()
  }
}

async function attempt(core: BrokerContext, run: Run, chain: ProcessChain): Promise<Outcome> {
  const abort = abortion(run)
  try {
    const outcome = await core.transactions.begin(async (handle, tx) => {
      run.transaction = handle
      const ran = chain(run).catch((error: unknown): Outcome => ({ kind: 'failure', error }))
      const outcome = await Promise.race([ran, abort.promise])
      if (outcome.kind !== 'success') throw new Rollback(outcome)
      if (run.abandoned) throw new Rollback(outcome)
      if (run.cancelled) throw new Rollback({ kind: 'cancelled' })
      const sql = statementsFor(core)
      const [held] = await tx.query<{ cancel_requested: boolean }>(sql.guard, [
        run.message.id,
        run.workerId,
      ])
      if (held === undefined) throw new Rollback(undefined, outcome)
      if (held.cancel_requested) throw new Rollback({ kind: 'cancelled' })
      run.outcome = outcome
      run.endProgress()
      await settleInTransaction(core, [run], run.workerId, tx, durableSettle(core, run))
      return outcome
    })
    run.settled = true
    return outcome
  } catch (error) {
    if (error instanceof Rollback) {
      if (error.outcome !== undefined) return error.outcome
      core.logger.warn(
        'transactional commit refused: the message is no longer held by this worker (crash recovery gave it to another worker, or it was settled elsewhere); rolled back',
        { message: run.message.id, actor: run.message.actor, worker: run.workerId },
      )
      // Counted as the batcher counts refused outcomes; the warning above says why.
      reportRefused(core, run.workerId, [{ message: run.message, outcome: error.refused! }], 1, {
        log: false,
      })
      run.settled = true
      return { kind: 'requeue' }
    }
    core.logger.warn('transactional run could not commit; rolled back', {
      message: run.message.id,
      actor: run.message.actor,
      error,
    })
    // Callbacks of a success that did not commit must not be sent.
    run.followUps = []
    return decide(run, { kind: 'failure', error })
  } finally {
    abort.dispose()
    run.transaction = undefined
  }
}
