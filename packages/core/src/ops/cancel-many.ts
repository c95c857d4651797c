import { invalidOption } from '../options/check-option.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { wrapError } from '../runtime/wrap-error.js'
import { assertFilter, type BulkOptions, bulkBatchSize, Conditions } from './bulk-filter.js'

/**
 * Which messages `broker.cancelMany()` cancels. Every filter given must
 * match; none means every queued and running message of the namespace.
 *
 * @example
 * const { cancelled, requested } = await broker.cancelMany({ queue: 'reports', actor: 'build_report' })
 */
export interface CancelManyOptions extends BulkOptions<CancelManyResult> {
  readonly queue?: string
  readonly actor?: string
  /**
   * `'queued'`: only messages not claimed yet (delayed ones included);
   * `'consumed'`: only messages a worker holds. Default: both.
   */
  readonly state?: 'queued' | 'consumed'
}

/**
 * What `broker.cancelMany()` did, or with `dryRun` would do: `cancelled`
 * messages will never run; `requested` ones were claimed by a worker, which
 * drops them if not started or aborts their handler's signal (as
 * `broker.cancel()` reports `requested`).
 *
 * @example
 * const { cancelled, requested, dryRun }: CancelManyResult = await broker.cancelMany({ queue: 'q', dryRun: true })
 */
export interface CancelManyResult {
  readonly cancelled: number
  readonly requested: number
  readonly dryRun: boolean
}

const KNOWN = ['queue', 'actor', 'state', 'dryRun', 'batchSize', 'onProgress']

/**
 * @internal Cancels the messages matching a filter, a batch at a time.
 *
 * Only messages enqueued by the time the call starts are cancelled, so a
 * steady producer cannot keep it running. Each batch is one statement that
 * locks its rows `SKIP LOCKED`: queued rows become `cancelled` (and their
 * result waiters are woken), claimed rows are flagged and their workers told
 * on the control channel, as `broker.cancel()` does. A row a worker is
 * claiming at that instant is skipped; it is then claimed, and a second call
 * (or `state: 'consumed'`) reaches it.
 */
export async function cancelMany(
  core: BrokerContext,
  options: CancelManyOptions = {},
): Promise<CancelManyResult> {
  assertFilter('cancelMany', options, KNOWN)
  const batchSize = bulkBatchSize(options.batchSize)
  const { state } = options
  if (state !== undefined && state !== 'queued' && state !== 'consumed') {
    throw invalidOption('state', state, "'queued' or 'consumed'")
  }
  const messages = core.ns.table('messages')
  const params: unknown[] = [null]
  const where = new Conditions(params)
  if (state === 'queued') where.raw("state = 'queued'")
  else if (state === 'consumed') where.raw("state = 'consumed' and not cancel_requested")
  else where.raw("(state = 'queued' or (state = 'consumed' and not cancel_requested))")
  where.raw('enqueued_at <= $1::timestamptz').names(options)
  try {
    const [clock] = await core.executor.query<{ start: string }>('select now()::text as start')
    params[0] = clock!.start
    if (options.dryRun === true) {
      const [row] = await core.executor.query<{ queued: number; consumed: number }>(
        `select count(*) filter (where state = 'queued')::int as queued,
                count(*) filter (where state = 'consumed')::int as consumed
           from ${messages} where ${where}`,
        params,
      )
      return { cancelled: row?.queued ?? 0, requested: row?.consumed ?? 0, dryRun: true }
    }
    const n = params.length
    const batch = `with picked as (
  select id, state from ${messages} where ${where} limit $${n + 1} for update skip locked
), changed as (
  update ${messages} m
     set state = case when p.state = 'queued' then 'cancelled' else m.state end,
         cancel_requested = true, updated_at = now()
    from picked p where m.id = p.id
  returning m.id, p.state as previous
), told as (
  select pg_notify($${n + 2}, 'cancel:' || id::text) from changed where previous = 'consumed'
), waiters as (
  select pg_notify($${n + 3}, id::text) from changed where previous = 'queued'
)
select count(*) filter (where previous = 'queued')::int as cancelled,
       count(*) filter (where previous = 'consumed')::int as requested,
       (select count(*) from told)::int as told, (select count(*) from waiters)::int as woken
  from changed`
    let cancelled = 0
    let requested = 0
    for (;;) {
      const [row] = await core.executor.query<{ cancelled: number; requested: number }>(batch, [
        ...params,
        batchSize,
        core.statements.controlChannel,
        core.statements.resultChannel,
      ])
      const changed = (row?.cancelled ?? 0) + (row?.requested ?? 0)
      cancelled += row?.cancelled ?? 0
      requested += row?.requested ?? 0
      if (changed > 0) options.onProgress?.({ cancelled, requested, dryRun: false })
      if (changed < batchSize) return { cancelled, requested, dryRun: false }
    }
  } catch (error) {
    throw wrapError(error, 'cancel messages')
  }
}
