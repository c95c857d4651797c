import { describeValue, type MessageState } from '@iddqueue/schema'
import { refuseOption, timeOption } from '../options/check-option.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { wrapError } from '../runtime/wrap-error.js'
import { assertFilter, type BulkOptions, bulkBatchSize, Conditions } from './bulk-filter.js'

/**
 * A state a message never leaves (but for an explicit retry of a rejected one).
 *
 * @example
 * const state: TerminalState = 'rejected'
 * await broker.deleteMessages({ queue: 'emails', state })
 */
export type TerminalState = Extract<MessageState, 'done' | 'rejected' | 'cancelled'>

/**
 * Which finished messages `broker.deleteMessages()` deletes. Every filter
 * given must match; none means every done, rejected and cancelled message of
 * the namespace. Queued and running messages are never deleted (use
 * `cancelMany` or `flush`).
 *
 * @example
 * const { deleted } = await broker.deleteMessages({
 *   queue: 'emails',
 *   state: 'rejected',
 *   finishedBefore: Date.now() - 24 * 3600 * 1000,
 * })
 */
export interface DeleteMessagesOptions extends BulkOptions<DeleteMessagesResult> {
  readonly queue?: string
  readonly actor?: string
  /** One terminal state, or several. Default: done, rejected and cancelled. */
  readonly state?: TerminalState | readonly TerminalState[]
  /** Only messages that finished before this time: a Date or epoch ms, in years 1 to 9999 (UTC). */
  readonly finishedBefore?: Date | number
}

/**
 * What `broker.deleteMessages()` deleted, or with `dryRun` would delete.
 *
 * @example
 * const { deleted }: DeleteMessagesResult = await broker.deleteMessages({ queue: 'q', dryRun: true })
 */
export interface DeleteMessagesResult {
  readonly deleted: number
  readonly dryRun: boolean
}

const KNOWN = ['queue', 'actor', 'state', 'finishedBefore', 'dryRun', 'batchSize', 'onProgress']
const TERMINAL: readonly TerminalState[] = ['done', 'rejected', 'cancelled']

/**
 * @internal Deletes finished messages matching a filter, a batch at a time,
 * each batch one statement over rows locked `SKIP LOCKED` (a row a concurrent
 * retry holds is left to it). Only messages finished by the time the call
 * starts are deleted.
 */
export async function deleteMessages(
  core: BrokerContext,
  options: DeleteMessagesOptions = {},
): Promise<DeleteMessagesResult> {
  assertFilter('deleteMessages', options, KNOWN)
  const batchSize = bulkBatchSize(options.batchSize)
  const finishedBefore = timeOption('finishedBefore', options.finishedBefore)
  const states =
    options.state === undefined
      ? TERMINAL
      : typeof options.state === 'string'
        ? [options.state]
        : options.state
  if (
    !Array.isArray(states) ||
    states.length === 0 ||
    !states.every((s) => TERMINAL.includes(s as TerminalState))
  ) {
    // An array keeps its brackets, which the one shape's rendering would drop.
    const given = Array.isArray(options.state)
      ? `[${options.state.map(describeValue).join(',')}]`
      : describeValue(options.state)
    const expected = "'done', 'rejected', 'cancelled' or a non-empty array of them"
    throw refuseOption(`Invalid state ${given}: expected ${expected}`, {
      option: 'state',
      value: options.state,
      expected,
    })
  }
  const messages = core.ns.table('messages')
  const params: unknown[] = [null]
  const where = new Conditions(params)
    .add('state = any(?::text[])', [...new Set(states)])
    .raw('updated_at <= $1::timestamptz')
    .names(options)
  if (finishedBefore !== undefined) where.add('updated_at < ?::timestamptz', finishedBefore)
  try {
    const [clock] = await core.executor.query<{ start: string }>('select now()::text as start')
    params[0] = clock!.start
    if (options.dryRun === true) {
      const [row] = await core.executor.query<{ n: number }>(
        `select count(*)::int as n from ${messages} where ${where}`,
        params,
      )
      return { deleted: row?.n ?? 0, dryRun: true }
    }
    const n = params.length
    const batch = `with picked as (
  select id from ${messages} where ${where} limit $${n + 1} for update skip locked
), deleted as (
  delete from ${messages} m using picked where m.id = picked.id returning 1
)
select count(*)::int as deleted from deleted`
    let deleted = 0
    for (;;) {
      const [row] = await core.executor.query<{ deleted: number }>(batch, [...params, batchSize])
      const count = row?.deleted ?? 0
      deleted += count
      if (count > 0) options.onProgress?.({ deleted, dryRun: false })
      if (count < batchSize) return { deleted, dryRun: false }
    }
  } catch (error) {
    throw wrapError(error, 'delete messages')
  }
}
