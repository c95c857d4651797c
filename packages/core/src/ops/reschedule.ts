import type { MessageState } from '@iddqueue/schema'
import { assertEnqueueOptions } from '../enqueue/enqueue-options.js'
import {
  checkKnownKeys,
  checkObject,
  checkUuid,
  dateTime,
  refuseOption,
} from '../options/check-option.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { wrapError } from '../runtime/wrap-error.js'

/**
 * Options of `broker.reschedule()`: a new earliest start (`eta` or
 * `delayMs`, from now by PostgreSQL's clock), a new priority, or both. At
 * least one is required.
 *
 * @example
 * await broker.reschedule(id, { delayMs: 10 * 60_000, priority: 5 })
 */
export interface RescheduleOptions {
  /** The new earliest start: a Date or epoch ms. Not with `delayMs`. */
  readonly eta?: Date | number
  /** The new earliest start, in ms from now. */
  readonly delayMs?: number
  /** The new priority; smaller runs first. */
  readonly priority?: number
}

/**
 * What `broker.reschedule()` or `broker.runNow()` did.
 *
 * | `status` | meaning |
 * | --- | --- |
 * | `rescheduled` | `reschedule()` changed the queued message |
 * | `promoted` | `runNow()` made a delayed message ready now |
 * | `ready` | `runNow()` found the message already due: nothing changed |
 * | `not-queued` | a worker holds it, or it finished: nothing changed (`state` says which) |
 * | `missing` | no such message (`state` is null) |
 *
 * @example
 * const { status, state }: RescheduleResult = await broker.runNow(id)
 * if (status === 'not-queued') console.log(`too late: it is ${state}`)
 */
export interface RescheduleResult {
  readonly status: 'rescheduled' | 'promoted' | 'ready' | 'not-queued' | 'missing'
  /** The message's state after the call; null when missing. */
  readonly state: MessageState | null
  /** The earliest start after the call (absent when missing). */
  readonly eta?: Date
  /** The priority after the call (absent when missing). */
  readonly priority?: number
}

interface Row {
  state: MessageState
  eta: Date
  priority: number
}

/**
 * @internal Changes the eta and priority of a queued message. The update
 * re-checks `queued` after waiting for a claim that holds the row, so a
 * message a worker took is never changed (`not-queued`).
 */
export async function reschedule(
  core: BrokerContext,
  id: string,
  options: RescheduleOptions,
): Promise<RescheduleResult> {
  checkUuid('message id', id)
  checkObject('options', options, 'reschedule options')
  checkKnownKeys(
    options,
    ['eta', 'delayMs', 'priority'],
    (key) => `Unknown reschedule option ${JSON.stringify(key)}: expected eta, delayMs or priority`,
  )
  const { eta, delayMs, priority } = options
  if (eta === undefined && delayMs === undefined && priority === undefined) {
    throw refuseOption('reschedule needs eta, delayMs or priority', {
      option: 'options',
      value: options,
      expected: 'eta, delayMs or priority',
    })
  }
  assertEnqueueOptions({ eta, delayMs, priority }, `reschedule ${id}`)
  const etaMs = eta === undefined ? null : eta instanceof Date ? dateTime(eta) : eta
  return change(
    core,
    id,
    `eta = case when $2::float8 is not null then to_timestamp($2::float8 / 1000.0)
                when $3::float8 is not null then now() + $3::float8 * interval '1 millisecond'
                else m.eta end,
     priority = coalesce($4::int, m.priority)`,
    'true',
    [etaMs, delayMs ?? null, priority ?? null],
    'rescheduled',
    `reschedule message ${id}`,
  )
}

/** @internal Makes a delayed queued message ready now (BullMQ's `promote`). */
export async function runNow(core: BrokerContext, id: string): Promise<RescheduleResult> {
  checkUuid('message id', id)
  return change(core, id, 'eta = now()', 'm.eta > now()', [], 'promoted', `run message ${id} now`)
}

/**
 * Updates the row if it is queued (and `when` holds) and wakes its queue;
 * when nothing changed, reads the state in a second statement, which sees
 * a claim that committed while the update waited for it.
 */
async function change(
  core: BrokerContext,
  id: string,
  set: string,
  when: string,
  params: unknown[],
  status: 'rescheduled' | 'promoted',
  what: string,
): Promise<RescheduleResult> {
  const messages = core.ns.table('messages')
  const update = `with changed as (
  update ${messages} m set ${set}, updated_at = now()
   where m.id = $1 and m.state = 'queued' and ${when}
  returning m.state, m.eta, m.priority, m.queue
), woken as (
  select pg_notify($${params.length + 2}, queue) from changed
)
select state, eta, priority, (select count(*) from woken)::int as woken from changed`
  try {
    const [changed] = await core.executor.query<Row>(update, [
      id,
      ...params,
      core.statements.wakeChannel,
    ])
    if (changed)
      return { status, state: changed.state, eta: changed.eta, priority: changed.priority }
    const [row] = await core.executor.query<Row>(
      `select state, eta, priority from ${messages} where id = $1`,
      [id],
    )
    if (!row) return { status: 'missing', state: null }
    return {
      status: row.state === 'queued' ? 'ready' : 'not-queued',
      state: row.state,
      eta: row.eta,
      priority: row.priority,
    }
  } catch (error) {
    throw wrapError(error, what)
  }
}
