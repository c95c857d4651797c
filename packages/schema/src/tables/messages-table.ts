import type { ColumnType, Generated, JSONColumnType } from 'kysely'

/**
 * A message's place in its life cycle.
 *
 * @example
 * const state: MessageState = 'rejected'
 * const rejected = await db.selectFrom('messages').select('id').where('state', '=', state).execute()
 */
export type MessageState = 'queued' | 'consumed' | 'done' | 'rejected' | 'cancelled'

/**
 * Every message state, in life-cycle order.
 *
 * @example
 * const counts = await db.selectFrom('messages').select(['state', db.fn.countAll().as('n')]).groupBy('state').execute()
 * for (const state of MESSAGE_STATES) console.log(state, counts.find((c) => c.state === state)?.n ?? 0)
 */
export const MESSAGE_STATES: readonly MessageState[] = Object.freeze([
  'queued',
  'consumed',
  'done',
  'rejected',
  'cancelled',
])

/**
 * The last failure of a message, kept until it succeeds.
 *
 * @example
 * const rows = await db.selectFrom('messages').select(['id', 'failure']).where('state', '=', 'rejected').execute()
 * for (const { id, failure } of rows) console.log(id, failure?.type, failure?.message)
 */
export interface FailureRecord {
  /** The error's class name, such as `TypeError`. */
  readonly type: string
  /** The error's text, at most 2,000 characters. */
  readonly message: string
  /** When the attempt failed (ISO 8601, the worker's clock). */
  readonly at: string
  /** The attempt that failed, from 1. */
  readonly attempt: number
  /** The stack trace, when the error had one. */
  readonly stack?: string
}

/**
 * The `messages` table: one row per message, in every state.
 *
 * A partial index over `queued` rows serves the claim, so retained finished
 * rows never slow it down.
 *
 * @example
 * const ready: Selectable<MessagesTable>[] = await db
 *   .selectFrom('messages').selectAll().where('state', '=', 'queued').where('eta', '<=', new Date()).execute()
 */
export interface MessagesTable {
  id: string
  queue: string
  actor: string
  state: ColumnType<MessageState, MessageState | undefined, MessageState>
  /** Smaller runs first. */
  priority: Generated<number>
  /** Earliest start. */
  eta: ColumnType<Date, Date | string | undefined, Date | string>
  args: JSONColumnType<unknown[]>
  options: JSONColumnType<Record<string, unknown>>
  /** Failed attempts that were retried (the retry budget used). */
  retries: Generated<number>
  /** Deliveries to a worker, including ones a crash interrupted. */
  attempts: Generated<number>
  /** The original enqueue time; `maxAgeMs` is measured from it. */
  enqueued_at: ColumnType<Date, Date | string | undefined, Date | string>
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>
  /** The worker that holds a `consumed` message. */
  worker_id: string | null
  /** When the last delivery was claimed. */
  started_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
  cancel_requested: Generated<boolean>
  failure: ColumnType<FailureRecord | null, string | null | undefined, string | null>
  /** The last value the running handler reported with `ctx.progress()`; cleared on retry. */
  progress: ColumnType<unknown, string | null | undefined, string | null>
}
