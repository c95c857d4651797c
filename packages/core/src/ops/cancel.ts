import type { MessageState } from '@iddqueue/schema'
import { checkObject, checkUuid, integerOption, MAX_TIMER_MS } from '../options/check-option.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { wrapError } from '../runtime/wrap-error.js'
import { formatControl, onControl } from './control.js'

/**
 * What `broker.cancel()` did: `cancelled` (the handler never ran and never
 * will), `requested` (it is running: its signal was aborted), `terminal`
 * (already done or rejected; nothing changed) or `missing`.
 *
 * @example
 * const { status, state }: CancelResult = await broker.cancel(message.id)
 * if (status === 'requested') console.log(`running (${state}): its signal was aborted`)
 */
export interface CancelResult {
  readonly status: 'cancelled' | 'requested' | 'terminal' | 'missing'
  /** The message's state after the call; null when missing. */
  readonly state: MessageState | null
}

/**
 * What `broker.cancellationStatus()` reports.
 *
 * @example
 * const { state, requested }: CancellationStatus = await broker.cancellationStatus(message.id)
 */
export interface CancellationStatus {
  readonly state: MessageState | null
  /** True once a cancellation was requested. */
  readonly requested: boolean
}

/**
 * Options of `broker.cancel()`.
 *
 * @example
 * await broker.cancel(message.id, { timeoutMs: 5_000 })
 */
export interface CancelOptions {
  /**
   * How long to wait for the owning worker's answer about a claimed message:
   * 0 to 2^31 - 1 ms. Default 2,000 ms.
   */
  readonly timeoutMs?: number | undefined
}

/** @internal */
export async function cancel(
  core: BrokerContext,
  id: string,
  options: CancelOptions = {},
): Promise<CancelResult> {
  checkUuid('message id', id)
  // Checked before the cancellation is stored: a refusal must change nothing.
  checkObject('options', options, 'options for cancel()', false)
  const timeoutMs = integerOption('timeoutMs', options.timeoutMs, 2_000, {
    min: 0,
    max: MAX_TIMER_MS,
    where: 'cancel()',
  })
  const messages = core.ns.table('messages')
  let answer: ((running: boolean) => void) | undefined
  // Listen before the request commits: the owning worker answers at once.
  const unsubscribe = await onControl(core, (message) => {
    if (message.kind === 'cancelled' && message.messageId === id) answer?.(message.running)
  })
  try {
    const [row] = await core.executor.query<{ previous: MessageState; state: MessageState }>(
      `with target as (
  select id, state from ${messages} where id = $1 for update
), changed as (
  update ${messages} m
     set state = case when t.state = 'queued' then 'cancelled' else m.state end,
         cancel_requested = true, updated_at = now()
    from target t where m.id = t.id and t.state in ('queued', 'consumed')
  returning m.state
), told as (
  select pg_notify($2, $3) from target where state = 'consumed'
)
select t.state as previous, coalesce((select state from changed), t.state) as state,
       (select count(*) from told) as told
  from target t`,
      [id, core.statements.controlChannel, formatControl({ kind: 'cancel', messageId: id })],
    )
    if (!row) return { status: 'missing', state: null }
    if (row.previous === 'done' || row.previous === 'rejected')
      return { status: 'terminal', state: row.previous }
    if (row.state === 'cancelled') {
      await notifyWaiters(core, id)
      return { status: 'cancelled', state: 'cancelled' }
    }
    // Claimed by a worker: only it knows whether the handler started.
    const running = await new Promise<boolean | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), core.listener.available ? timeoutMs : 0)
      answer = (value) => {
        clearTimeout(timer)
        resolve(value)
      }
    })
    if (running === false) return { status: 'cancelled', state: 'cancelled' }
    return { status: 'requested', state: 'consumed' }
  } catch (error) {
    throw wrapError(error, `cancel message ${id}`)
  } finally {
    await unsubscribe()
  }
}

/** @internal Wakes result waiters of a message that will never have a result. */
export async function notifyWaiters(core: BrokerContext, id: string): Promise<void> {
  await core.executor.query('select pg_notify($1, $2)', [core.ns.channel('result'), id])
}

/** @internal */
export async function cancellationStatus(
  core: BrokerContext,
  id: string,
): Promise<CancellationStatus> {
  checkUuid('message id', id)
  const compiled = (await core.queries())
    .selectFrom('messages')
    .select(['state', 'cancel_requested'])
    .where('id', '=', id)
    .compile()
  try {
    const [row] = await core.executor.query<{ state: MessageState; cancel_requested: boolean }>(
      compiled.sql,
      compiled.parameters,
    )
    return row
      ? { state: row.state, requested: row.cancel_requested }
      : { state: null, requested: false }
  } catch (error) {
    throw wrapError(error, `read the cancellation status of ${id}`)
  }
}
