import type { Executor, FailureRecord, MessageState } from '@iddqueue/schema'
import { writeMessages } from '../enqueue/enqueue.js'
import type { PreparedEntry } from '../enqueue/prepared-entry.js'
import type { Message } from '../message/message.js'
import type { Middleware, Outcome, SettledMessage } from '../plugin/middleware-interface.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { settledByWorkerSql } from '../sql/settle.js'
import { failureRecord } from './failure-record.js'

/** @internal One outcome waiting to be written. */
export interface SettleEntry {
  readonly message: Message
  readonly outcome: Outcome
  readonly attempt: number
  /** Messages to send in the settle transaction, checked and encoded when they were asked for. */
  readonly followUps: readonly PreparedEntry[]
  /** The last progress the attempt reported, as JSON, if it reported any. */
  readonly progress?: string | undefined
}

interface Row {
  readonly state: MessageState
  readonly delayMs: number | null
  readonly retried: number
  readonly failure: FailureRecord | undefined
}

function row(entry: SettleEntry): Row {
  const outcome = entry.outcome
  switch (outcome.kind) {
    case 'success':
      return { state: 'done', delayMs: null, retried: 0, failure: undefined }
    case 'requeue':
      return { state: 'queued', delayMs: outcome.delayMs ?? null, retried: 0, failure: undefined }
    case 'cancelled':
      return { state: 'cancelled', delayMs: null, retried: 0, failure: undefined }
    case 'failure': {
      const failure = failureRecord(outcome.error, entry.attempt)
      return outcome.retryDelayMs === undefined
        ? { state: 'rejected', delayMs: null, retried: 0, failure }
        : { state: 'queued', delayMs: outcome.retryDelayMs, retried: 1, failure }
    }
  }
}

/**
 * Whether a settle hook runs for this batch: always, unless the middleware
 * says with `forActor` that it leaves alone the actors of a batch made only
 * of successes. So a plugin that concerns a few actors (results) does not
 * turn every other batch into a transaction.
 */
function concerns(core: BrokerContext, middleware: Middleware, entries: readonly SettleEntry[]) {
  if (middleware.settleFor) return entries.some((e) => middleware.settleFor!(e.message))
  if (!middleware.forActor) return true
  return entries.some((e) => {
    if (e.outcome.kind !== 'success') return true
    const actor = core.actors.get(e.message.actor)
    return actor === undefined || middleware.forActor!(actor)
  })
}

/**
 * @internal Writes a batch of outcomes for worker `workerId`. All successes
 * with nothing else to do: one `ack` statement. Otherwise one `settle`
 * statement; and when there are follow-up messages or plugin settle hooks,
 * a transaction that also inserts the follow-ups and runs the hooks for the
 * messages this worker still held (a message recovered by another worker is
 * left alone, so its follow-ups are not sent twice).
 *
 * Returns the entries whose outcome was refused: the guarded statements
 * write only rows still consumed by this worker. Usually none, learnt from
 * the statement's own result at no extra cost. `maybeWritten` names the
 * entries an earlier attempt of this write may have committed (its
 * connection was lost before the answer came back).
 */
export async function settleBatch(
  core: BrokerContext,
  entries: readonly SettleEntry[],
  workerId: string,
  maybeWritten: (entry: SettleEntry) => boolean = () => false,
): Promise<readonly SettleEntry[]> {
  const hooks = core.middleware.filter((m) => m.settle && concerns(core, m, entries))
  const needsTransaction = hooks.length > 0 || entries.some((e) => e.followUps.length > 0)
  const statement = settleStatementFor(core, entries)
  const allAcks = entries.every((e) => e.outcome.kind === 'success' && e.progress === undefined)
  const requeued = [
    ...new Set(entries.filter((e) => e.outcome.kind === 'requeue').map((e) => e.message.queue)),
  ]
  if (allAcks && !needsTransaction) {
    // The ack returns the ids it did not acknowledge: usually no row.
    const ack =
      statement === core.statements.settle ? core.statements.ack : core.statements.settleWith!.ack
    const skipped = await core.executor.query<{ id: string }>(ack, [
      entries.map((e) => e.message.id),
      workerId,
    ])
    if (skipped.length === 0) return []
    const ids = new Set(skipped.map((r) => r.id))
    return refusedOf(
      core,
      entries.filter((e) => ids.has(e.message.id)),
      () => 'done',
      workerId,
      maybeWritten,
    )
  }
  const rows = entries.map(row)
  const params = settleParams(entries, rows, workerId)
  let written: ReadonlySet<string>
  if (!needsTransaction) {
    const changed = await core.executor.query<{ id: string }>(statement, params)
    // Messages handed back (pause, graceful stop) are for other workers: wake them.
    if (requeued.length > 0)
      await core.executor.query(core.statements.wakeQueues, [core.statements.wakeChannel, requeued])
    written = new Set(changed.map((r) => r.id))
  } else {
    const states = await core.executor.transaction((tx) =>
      settleWithin(core, entries, rows, params, tx, hooks, requeued, statement),
    )
    written = new Set(states.keys())
  }
  if (written.size === entries.length) return []
  const intended = new Map(entries.map((e, i) => [e, rows[i]!.state]))
  return refusedOf(
    core,
    entries.filter((e) => !written.has(e.message.id)),
    (e) => intended.get(e)!,
    workerId,
    maybeWritten,
  )
}

/**
 * The entries of `unwritten` (outcomes a statement did not write) that were
 * refused. Those an earlier, interrupted attempt of the write may have
 * committed are asked about (one more statement, only then): one this
 * worker finished already in its intended state was written by that
 * attempt. Only finished states keep the worker's id; an outcome that hands
 * the message back to the queue, or a success deleted by `deleteOnSuccess`,
 * cannot be told apart and counts as refused. An entry never sent before
 * cannot have been written by this worker, whatever the row says: if this
 * worker finished the row, that was another attempt of the same message,
 * which it claimed again after crash recovery queued it.
 */
async function refusedOf(
  core: BrokerContext,
  unwritten: readonly SettleEntry[],
  intended: (entry: SettleEntry) => MessageState,
  workerId: string,
  maybeWritten: (entry: SettleEntry) => boolean,
): Promise<readonly SettleEntry[]> {
  const uncertain = unwritten.filter(maybeWritten)
  if (uncertain.length === 0) return unwritten
  const statement = settledByWorkerSql(core.ns)
  let mine: readonly { id: string; state: MessageState }[]
  try {
    mine = await core.executor.query(statement, [uncertain.map((e) => e.message.id), workerId])
  } catch {
    // The batch's write is done: writing it again for want of this answer
    // would gain nothing. Count them all as refused.
    return unwritten
  }
  const already = new Map(mine.map((r) => [r.id, r.state]))
  return unwritten.filter((e) => !maybeWritten(e) || already.get(e.message.id) !== intended(e))
}

/**
 * @internal Core's settle statement, or the one with the plugins' settle
 * clauses in it when they concern a message of the batch (decision 0016).
 */
export function settleStatementFor(
  core: BrokerContext,
  entries: readonly { readonly message: Message }[],
): string {
  const withClauses = core.statements.settleWith
  return withClauses && entries.some((e) => withClauses.concerns(e.message))
    ? withClauses.sql
    : core.statements.settle
}

/**
 * @internal Writes outcomes inside `tx`, a transaction the caller owns: the
 * settle statement, then, for the messages this worker still held, their
 * follow-up messages and the plugins' settle hooks. A transactional run
 * calls it inside the handler's own transaction. Returns how many of the
 * entries were still held (and so settled).
 */
export async function settleInTransaction(
  core: BrokerContext,
  entries: readonly SettleEntry[],
  workerId: string,
  tx: Executor,
  settleStatement = settleStatementFor(core, entries),
): Promise<number> {
  const hooks = core.middleware.filter((m) => m.settle && concerns(core, m, entries))
  const rows = entries.map(row)
  const requeued = [
    ...new Set(entries.filter((e) => e.outcome.kind === 'requeue').map((e) => e.message.queue)),
  ]
  const written = await settleWithin(
    core,
    entries,
    rows,
    settleParams(entries, rows, workerId),
    tx,
    hooks,
    requeued,
    settleStatement,
  )
  return written.size
}

function settleParams(entries: readonly SettleEntry[], rows: readonly Row[], workerId: string) {
  return [
    entries.map((e) => e.message.id),
    rows.map((r) => r.state),
    rows.map((r) => r.delayMs),
    rows.map((r) => r.retried),
    rows.map((r) => (r.failure ? JSON.stringify(r.failure) : null)),
    workerId,
    entries.map((e) => e.progress ?? null),
  ]
}

async function settleWithin(
  core: BrokerContext,
  entries: readonly SettleEntry[],
  rows: readonly Row[],
  params: readonly unknown[],
  tx: Executor,
  hooks: readonly Middleware[],
  requeued: readonly string[],
  settleStatement = core.statements.settle,
): Promise<ReadonlyMap<string, MessageState>> {
  const written = await tx.query<{ id: string; state: MessageState }>(settleStatement, params)
  const states = new Map(written.map((w) => [w.id, w.state]))
  const settled: SettledMessage[] = []
  const followUps: PreparedEntry[] = []
  entries.forEach((entry, index) => {
    const state = states.get(entry.message.id)
    if (state === undefined) return
    settled.push({
      message: entry.message,
      outcome: entry.outcome,
      state,
      attempt: entry.attempt,
      failure: rows[index]!.failure,
    })
    followUps.push(...entry.followUps)
  })
  if (followUps.length > 0) await writeMessages(core, followUps, tx, true)
  for (const hook of hooks) await hook.settle!({ settled, executor: tx })
  if (requeued.length > 0)
    await tx.query(core.statements.wakeQueues, [core.statements.wakeChannel, requeued])
  return states
}
