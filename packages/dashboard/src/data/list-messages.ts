import { assertQueueName, InvalidOptionError, isUuid } from '@iddqueue/core'
import { describeValue, MESSAGE_STATES, type MessageState } from '@iddqueue/schema'
import { sql } from 'kysely'
import type { DashboardData } from './dashboard-data.js'

/** @internal The messages view's filters, parsed from its query string. */
export interface MessageFilter {
  readonly queue?: string
  readonly actor?: string
  readonly state?: MessageState
  /** Enqueued at or after (inclusive). */
  readonly from?: Date
  /** Enqueued before (exclusive). */
  readonly to?: Date
  /** JSON that the arguments must contain (`args @> …`). */
  readonly args?: unknown
}

/** @internal One row of the messages view: never the arguments. */
export interface MessageRow {
  readonly id: string
  readonly queue: string
  readonly actor: string
  readonly state: MessageState
  readonly priority: number
  readonly eta: Date
  readonly attempts: number
  readonly retries: number
  readonly enqueued_at: Date
  readonly updated_at: Date
  readonly error_type: string | null
}

/** @internal A page of messages, newest first, and the cursor of the next one. */
export interface MessagePage {
  readonly items: readonly MessageRow[]
  readonly nextBefore: string | null
}

/** @internal Rows per page of the lists. */
export const PAGE_SIZE = 50

const ACTOR = /^[A-Za-z0-9_.:-]{1,200}$/

/** @internal Parses the filter fields of a query string or form; bad values are InvalidOptionError. */
export function parseMessageFilter(params: URLSearchParams): MessageFilter {
  const text = (name: string) => {
    const value = params.get(name)?.trim()
    return value === undefined || value === '' ? undefined : value
  }
  const queue = text('queue')
  if (queue !== undefined) assertQueueName(queue)
  const actor = text('actor')
  if (actor !== undefined && !ACTOR.test(actor))
    throw new InvalidOptionError(`Invalid actor ${describeValue(actor)}: expected an actor name`)
  const state = text('state')
  if (state !== undefined && !MESSAGE_STATES.includes(state as MessageState)) {
    throw new InvalidOptionError(
      `Invalid state ${describeValue(state)}: expected one of ${MESSAGE_STATES.join(', ')}`,
    )
  }
  const time = (name: string) => {
    const value = text(name)
    if (value === undefined) return undefined
    const date = new Date(value)
    if (Number.isNaN(date.getTime()))
      throw new InvalidOptionError(
        `Invalid ${name} ${describeValue(value)}: expected a date and time`,
      )
    return date
  }
  const argsText = text('args')
  let args: unknown
  if (argsText !== undefined) {
    try {
      args = JSON.parse(argsText)
    } catch (error) {
      throw new InvalidOptionError(
        `Invalid args ${describeValue(argsText)}: expected JSON, such as [{"user":42}]`,
        { cause: error },
      )
    }
    // `args` is a JSON array: containment by a bare value would match nothing.
    if (!Array.isArray(args)) args = [args]
  }
  return {
    ...(queue !== undefined ? { queue } : {}),
    ...(actor !== undefined ? { actor } : {}),
    ...(state !== undefined ? { state: state as MessageState } : {}),
    ...(time('from') ? { from: time('from')! } : {}),
    ...(time('to') ? { to: time('to')! } : {}),
    ...(args !== undefined ? { args } : {}),
  }
}

/** @internal The filter as query-string pairs (for links and hidden fields). */
export function filterParams(filter: MessageFilter): [string, string][] {
  const pairs: [string, string][] = []
  if (filter.queue) pairs.push(['queue', filter.queue])
  if (filter.actor) pairs.push(['actor', filter.actor])
  if (filter.state) pairs.push(['state', filter.state])
  if (filter.from) pairs.push(['from', filter.from.toISOString()])
  if (filter.to) pairs.push(['to', filter.to.toISOString()])
  if (filter.args !== undefined) pairs.push(['args', JSON.stringify(filter.args)])
  return pairs
}

/**
 * @internal Newest first by id (UUIDv7, so by enqueue time), keyset-paginated
 * on the primary key: a page costs the rows it reads, never an OFFSET. A
 * queue's rejected rows come from `messages_rejected (queue, id)`. A JSON
 * containment search runs in its own transaction under `searchTimeoutMs`,
 * since no index serves it.
 */
export async function listMessages(
  data: DashboardData,
  filter: MessageFilter,
  options: { readonly before?: string; readonly limit?: number; readonly searchTimeoutMs: number },
): Promise<MessagePage> {
  if (options.before !== undefined && !isUuid(options.before))
    throw new InvalidOptionError(`Invalid cursor ${describeValue(options.before)}: expected a UUID`)
  const limit = options.limit ?? PAGE_SIZE
  let query = data.db
    .selectFrom('messages')
    .select([
      'id',
      'queue',
      'actor',
      'state',
      'priority',
      'eta',
      'attempts',
      'retries',
      'enqueued_at',
      'updated_at',
      sql<string | null>`failure->>'type'`.as('error_type'),
    ])
    .orderBy('id', 'desc')
    .limit(limit + 1)
  if (filter.queue !== undefined) query = query.where('queue', '=', filter.queue)
  if (filter.actor !== undefined) query = query.where('actor', '=', filter.actor)
  if (filter.state !== undefined) query = query.where('state', '=', filter.state)
  if (filter.from !== undefined) query = query.where('enqueued_at', '>=', filter.from)
  if (filter.to !== undefined) query = query.where('enqueued_at', '<', filter.to)
  if (options.before !== undefined) query = query.where('id', '<', options.before)
  let rows: MessageRow[]
  if (filter.args !== undefined) {
    const contained = JSON.stringify(filter.args)
    const search = query.where(sql<boolean>`args @> cast(cast(${contained} as text) as jsonb)`)
    rows = await data.executor.transaction(async (tx) => {
      await tx.query(`set local statement_timeout = ${Math.trunc(options.searchTimeoutMs)}`)
      return data.rows(search, tx)
    })
  } else {
    rows = await data.rows(query)
  }
  const more = rows.length > limit
  const items = more ? rows.slice(0, limit) : rows
  return { items, nextBefore: more ? items[items.length - 1]!.id : null }
}
