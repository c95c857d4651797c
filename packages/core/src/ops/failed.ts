import type { FailureRecord, IddqueueDatabase } from '@iddqueue/schema'
import type { ExpressionBuilder } from 'kysely'
import { assertName } from '../actor/names.js'
import { checkObject, checkUuid, flagOption, integerOption } from '../options/check-option.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { wrapError } from '../runtime/wrap-error.js'

/**
 * The failure of a listed message: its error type, text, time and attempt, without the stack.
 *
 * @example
 * for (const { id, failure } of (await broker.listFailed()).items) {
 *   if (failure) console.log(id, failure.type, failure.message, failure.at, failure.attempt)
 * }
 */
export type FailureSummary = Omit<FailureRecord, 'stack'>

/**
 * A rejected message as `broker.listFailed()` lists it: no arguments, options or stack.
 *
 * @example
 * const { items } = await broker.listFailed({ queue: 'emails' })
 * const oldest: FailedSummary | undefined = items[0]
 * console.log(oldest?.actor, oldest?.retries, oldest?.updatedAt)
 */
export interface FailedSummary {
  readonly id: string
  readonly queue: string
  readonly actor: string
  /** Failed attempts that were retried before the last one. */
  readonly retries: number
  /** The original enqueue time. */
  readonly enqueuedAt: Date
  /** When the message was rejected (its last change). */
  readonly updatedAt: Date
  /** Null for a message rejected without failure metadata. */
  readonly failure: FailureSummary | null
}

/**
 * A rejected message as `broker.showFailed()` shows it. `args`, `options`
 * and `failure.stack` are present only with `{ payload: true }`: they may
 * hold application data.
 *
 * @example
 * const failed: FailedMessage | undefined = await broker.showFailed(id, { payload: true })
 * if (failed) console.log(failed.args, failed.failure?.stack)
 */
export interface FailedMessage extends Omit<FailedSummary, 'failure'> {
  /** Smaller runs first. */
  readonly priority: number
  /** The earliest start of the last attempt. */
  readonly eta: Date
  readonly failure: FailureRecord | null
  /** The message's arguments (only with `payload: true`). */
  readonly args?: readonly unknown[] | undefined
  /** The message's options (only with `payload: true`). */
  readonly options?: Readonly<Record<string, unknown>> | undefined
}

/**
 * Options of `broker.listFailed()`.
 *
 * @example
 * const page = await broker.listFailed({ queue: 'emails', actor: 'send_email', limit: 100 })
 */
export interface ListFailedOptions {
  /** Only this queue. */
  readonly queue?: string | undefined
  /** Only this actor. */
  readonly actor?: string | undefined
  /** The cursor: list ids after this one (the `nextAfter` of the previous page). */
  readonly after?: string | undefined
  /** Page size, from 1 to 1,000. Default 50. */
  readonly limit?: number | undefined
}

/**
 * A page of `broker.listFailed()`.
 *
 * @example
 * const { items, nextAfter }: ListFailedResult = await broker.listFailed({ after: cursor })
 */
export interface ListFailedResult {
  readonly items: FailedSummary[]
  /** The cursor for the next page (pass it as `after`); null on the last page. */
  readonly nextAfter: string | null
}

/**
 * Options of `broker.showFailed()`.
 *
 * @example
 * const withPayload = await broker.showFailed(id, { payload: true })
 */
export interface ShowFailedOptions {
  /** Include the arguments, options and stack trace. Default false. */
  readonly payload?: boolean | undefined
}

/**
 * What `broker.retryFailed()` did: `retried` (queued again now), `missing`,
 * `not-rejected` (the message is not rejected: nothing changed; what a
 * concurrent call that lost to another answers) or `busy` (something held the
 * row for more than two seconds: try again).
 *
 * @example
 * const { status } = await broker.retryFailed(id)
 * if (status === 'busy') setTimeout(() => void broker.retryFailed(id), 1_000)
 */
export interface RetryFailedResult {
  readonly status: 'retried' | 'missing' | 'not-rejected' | 'busy'
}

/** Default page size of `listFailed`. */
const DEFAULT_LIMIT = 50
/** Largest page of `listFailed`. */
const MAX_LIMIT = 1000
/** PostgreSQL's lock_not_available: the row stayed locked past `lock_timeout`. */
const LOCK_NOT_AVAILABLE = '55P03'
/**
 * How long `retryFailed` waits for the row's lock: long enough for a
 * concurrent `retryFailed` or a worker's settle transaction to commit (then
 * the answer is what it left: `not-rejected`), short enough to answer
 * `busy` when something holds the row for real.
 */
const RETRY_LOCK_TIMEOUT_MS = 2_000

/** @internal Checks a page size: an integer from 1 to 1,000, default 50. */
export function pageLimit(limit: unknown): number {
  return integerOption('limit', limit, DEFAULT_LIMIT, { min: 1, max: MAX_LIMIT })
}

/** `failure - 'stack'`: the failure record without its stack trace. */
const withoutStack = (eb: ExpressionBuilder<IddqueueDatabase, 'messages'>) =>
  // Kysely types the right operand of `-` as the column's type; jsonb takes a key here.
  eb('failure', '-', eb.cast(eb.val('stack'), 'text') as never)
    .$castTo<FailureRecord | null>()
    .as('failure')

interface Row {
  id: string
  queue: string
  actor: string
  retries: number
  enqueued_at: Date
  updated_at: Date
  failure: FailureRecord | null
  priority?: number | undefined
  eta?: Date | undefined
  args?: unknown[] | undefined
  options?: Record<string, unknown> | undefined
}

function summary(row: Row): FailedSummary {
  return {
    id: row.id,
    queue: row.queue,
    actor: row.actor,
    retries: row.retries,
    enqueuedAt: row.enqueued_at,
    updatedAt: row.updated_at,
    failure: row.failure ?? null,
  }
}

/** @internal Rejected messages in UUID order after a cursor. */
export async function listFailed(
  core: BrokerContext,
  options: ListFailedOptions = {},
): Promise<ListFailedResult> {
  checkObject('options', options)
  const limit = pageLimit(options.limit)
  if (options.queue !== undefined) assertName('queue', options.queue)
  if (options.actor !== undefined) assertName('actor', options.actor)
  if (options.after !== undefined) checkUuid('after', options.after, { where: 'cursor' })
  // With a queue, the partial index (queue, id) where state = 'rejected'
  // serves the page in cursor order.
  let query = (await core.queries())
    .selectFrom('messages')
    .select(['id', 'queue', 'actor', 'retries', 'enqueued_at', 'updated_at'])
    // The stack stays in the database: a page of summaries should be small.
    .select(withoutStack)
    .where('state', '=', 'rejected')
  if (options.queue !== undefined) query = query.where('queue', '=', options.queue)
  if (options.actor !== undefined) query = query.where('actor', '=', options.actor)
  if (options.after !== undefined) query = query.where('id', '>', options.after)
  const compiled = query.orderBy('id').limit(limit).compile()
  try {
    const rows = await core.executor.query<Row>(compiled.sql, compiled.parameters)
    const items = rows.map(summary)
    return {
      items,
      nextAfter: items.length === limit ? (items[items.length - 1]?.id ?? null) : null,
    }
  } catch (error) {
    throw wrapError(error, 'list failed messages')
  }
}

/** @internal One rejected message, with its payload on request. */
export async function showFailed(
  core: BrokerContext,
  id: string,
  options: ShowFailedOptions = {},
): Promise<FailedMessage | undefined> {
  checkUuid('message id', id)
  checkObject('options', options)
  const payload = flagOption('payload', options.payload)
  const base = (await core.queries())
    .selectFrom('messages')
    .select(['id', 'queue', 'actor', 'retries', 'enqueued_at', 'updated_at', 'priority', 'eta'])
    .where('id', '=', id)
    .where('state', '=', 'rejected')
  const compiled = payload
    ? base.select(['args', 'options', 'failure']).compile()
    : base.select(withoutStack).compile()
  let row: Row | undefined
  try {
    ;[row] = await core.executor.query<Row>(compiled.sql, compiled.parameters)
  } catch (error) {
    throw wrapError(error, `show failed message ${id}`)
  }
  if (!row) return undefined
  return {
    ...summary(row),
    priority: row.priority!,
    eta: row.eta!,
    failure: row.failure ?? null,
    ...(payload ? { args: row.args ?? [], options: row.options ?? {} } : {}),
  }
}

class Refused {
  constructor(readonly status: RetryFailedResult['status']) {}
}

/**
 * @internal Puts a rejected message back in its queue, atomically: the row is
 * locked (waiting up to two seconds for whoever holds it, else `busy`),
 * checked, reset, announced and handed to the `revive` hooks in one
 * transaction, so concurrent calls have one winner and the others answer
 * `not-rejected`.
 */
export async function retryFailed(core: BrokerContext, id: string): Promise<RetryFailedResult> {
  checkUuid('message id', id)
  await core.ready()
  const hooks = core.middleware.filter((m) => m.revive)
  const lock = (await core.queries())
    .selectFrom('messages')
    .select(['state', 'queue'])
    .where('id', '=', id)
    .forUpdate()
    .compile()
  // Keeps id, actor, args, options, priority and enqueued_at; clears the
  // retry cycle. A cancellation requested before the rejection would drop
  // the message at once: the explicit retry overrides it.
  const reset = (await core.queries())
    .updateTable('messages')
    .set({
      state: 'queued',
      retries: 0,
      failure: null,
      progress: null,
      eta: (eb) => eb.fn<Date>('now'),
      worker_id: null,
      cancel_requested: false,
      updated_at: (eb) => eb.fn<Date>('now'),
    })
    .where('id', '=', id)
    .compile()
  try {
    await core.executor.transaction(async (tx) => {
      // Wait for a concurrent winner instead of failing at once, so losers
      // read what it committed and answer `not-rejected`, as the docs say.
      await tx.query("select set_config('lock_timeout', $1, true)", [`${RETRY_LOCK_TIMEOUT_MS}ms`])
      const [row] = await tx.query<{ state: string; queue: string }>(lock.sql, lock.parameters)
      // Thrown, not returned: the transaction must roll back, not commit.
      if (!row) throw new Refused('missing')
      if (row.state !== 'rejected') throw new Refused('not-rejected')
      await tx.query(reset.sql, reset.parameters)
      await tx.query('select pg_notify($1, $2)', [core.statements.wakeChannel, row.queue])
      for (const hook of hooks) await hook.revive!({ messageIds: [id], executor: tx })
    })
    return { status: 'retried' }
  } catch (error) {
    if (error instanceof Refused) return { status: error.status }
    if ((error as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE) return { status: 'busy' }
    throw wrapError(error, `retry failed message ${id}`)
  }
}
