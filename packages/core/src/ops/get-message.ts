import type { FailureRecord, MessageState } from '@iddqueue/schema'
import { checkObject, checkUuid, flagOption } from '../options/check-option.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { wrapError } from '../runtime/wrap-error.js'

/**
 * A message as `broker.getMessage()` shows it: where it is in its life
 * cycle, how often it ran, its progress and last failure. `args` and
 * `options` are present only with `{ payload: true }`, and the failure's
 * stack only then too: they may hold application data.
 *
 * @example
 * const info: MessageInfo | undefined = await broker.getMessage(id)
 * if (info?.state === 'consumed') console.log('running', info.progress)
 */
export interface MessageInfo {
  readonly id: string
  readonly queue: string
  readonly actor: string
  readonly state: MessageState
  /** Smaller runs first. */
  readonly priority: number
  /** The earliest start (of the next attempt, while queued). */
  readonly eta: Date
  /** Deliveries to a worker, including ones a crash interrupted. */
  readonly attempts: number
  /** Failed attempts that were retried. */
  readonly retries: number
  /** The last value the handler reported with `ctx.progress()`, or null. */
  readonly progress: unknown
  /** The last failure, or null (cleared on success). */
  readonly failure: FailureRecord | null
  /** True once a cancellation was requested. */
  readonly cancelRequested: boolean
  /** The original enqueue time. */
  readonly enqueuedAt: Date
  /** The last change of state (progress writes leave it alone). */
  readonly updatedAt: Date
  /** When the last delivery was claimed; null if it never was. */
  readonly startedAt: Date | null
  /** The arguments (only with `payload: true`). */
  readonly args?: readonly unknown[]
  /** The message-level options (only with `payload: true`). */
  readonly options?: Readonly<Record<string, unknown>>
}

/**
 * Options of `broker.getMessage()`.
 *
 * @example
 * const info = await broker.getMessage(id, { payload: true })
 */
export interface GetMessageOptions {
  /** Include the arguments, options and failure stack. Default false. */
  readonly payload?: boolean
}

interface Row {
  id: string
  queue: string
  actor: string
  state: MessageState
  priority: number
  eta: Date
  attempts: number
  retries: number
  progress: unknown
  failure: FailureRecord | null
  cancel_requested: boolean
  enqueued_at: Date
  updated_at: Date
  started_at: Date | null
  args?: unknown[]
  options?: Record<string, unknown>
}

/** @internal One message in any state, or undefined when missing. */
export async function getMessage(
  core: BrokerContext,
  id: string,
  options: GetMessageOptions = {},
): Promise<MessageInfo | undefined> {
  checkUuid('message id', id)
  checkObject('options', options)
  const payload = flagOption('payload', options.payload)
  const compiled = (await core.queries())
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
      'progress',
      'cancel_requested',
      'enqueued_at',
      'updated_at',
      'started_at',
    ])
    .$if(payload, (q) => q.select(['args', 'options', 'failure']))
    .$if(!payload, (q) =>
      // The stack stays in the database unless the payload is asked for.
      q.select((eb) =>
        eb('failure', '-', eb.cast(eb.val('stack'), 'text') as never)
          .$castTo<FailureRecord | null>()
          .as('failure'),
      ),
    )
    .where('id', '=', id)
    .compile()
  let row: Row | undefined
  try {
    ;[row] = await core.executor.query<Row>(compiled.sql, compiled.parameters)
  } catch (error) {
    throw wrapError(error, `read message ${id}`)
  }
  if (!row) return undefined
  return {
    id: row.id,
    queue: row.queue,
    actor: row.actor,
    state: row.state,
    priority: row.priority,
    eta: row.eta,
    attempts: row.attempts,
    retries: row.retries,
    progress: row.progress ?? null,
    failure: row.failure ?? null,
    cancelRequested: row.cancel_requested,
    enqueuedAt: row.enqueued_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    ...(payload ? { args: row.args ?? [], options: row.options ?? {} } : {}),
  }
}
