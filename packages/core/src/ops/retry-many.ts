import { checkText, timeOption } from '../options/check-option.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { wrapError } from '../runtime/wrap-error.js'
import { MAX_ERROR_TYPE } from '../worker/failure-record.js'
import { assertFilter, type BulkOptions, bulkBatchSize, Conditions } from './bulk-filter.js'

/**
 * Which rejected messages `broker.retryFailed({...})` puts back in their
 * queue. Every filter given must match; none means every rejected message
 * of the namespace.
 *
 * @example
 * const { retried } = await broker.retryFailed({
 *   queue: 'emails',
 *   errorType: 'SmtpTimeout',
 *   failedBefore: new Date('2030-01-01T12:00:00Z'),
 * })
 */
export interface RetryManyOptions extends BulkOptions<RetryManyResult> {
  readonly queue?: string
  readonly actor?: string
  /** Only messages rejected before this time: a Date or epoch ms, in years 1 to 9999 (UTC). */
  readonly failedBefore?: Date | number
  /**
   * Only messages whose last failure has this error type (its class name,
   * such as `TypeError`): 1 to 200 characters, without `\u0000` or unpaired surrogates.
   */
  readonly errorType?: string
}

/**
 * What `broker.retryFailed({...})` did, or with `dryRun` would do.
 *
 * @example
 * const { retried, dryRun }: RetryManyResult = await broker.retryFailed({ queue: 'emails', dryRun: true })
 * console.log(`${retried} messages would be retried`)
 */
export interface RetryManyResult {
  readonly retried: number
  readonly dryRun: boolean
}

const KNOWN = ['queue', 'actor', 'failedBefore', 'errorType', 'dryRun', 'batchSize', 'onProgress']

/**
 * @internal Retries rejected messages matching a filter, a batch at a time.
 *
 * Only messages already rejected when the call starts are retried (their
 * last change is at or before its start), and batches follow UUID order
 * with a cursor, so a message this call retried that fails again is never
 * retried twice by it. Each batch locks its rows `SKIP LOCKED` and resets
 * them, wakes their queues and runs the `revive` hooks in one short
 * transaction, so concurrent retries (bulk or single) have one winner per
 * message and no batch waits on a worker.
 */
export async function retryMany(
  core: BrokerContext,
  options: RetryManyOptions,
): Promise<RetryManyResult> {
  assertFilter('retryFailed', options, KNOWN)
  const batchSize = bulkBatchSize(options.batchSize)
  const failedBefore = timeOption('failedBefore', options.failedBefore)
  const { errorType } = options
  checkText('errorType', errorType, MAX_ERROR_TYPE)
  const messages = core.ns.table('messages')
  // $1 is the call's start; the filters follow.
  const params: unknown[] = [null]
  const where = new Conditions(params)
    .raw("state = 'rejected'")
    .raw('updated_at <= $1::timestamptz')
    .names(options)
  if (failedBefore !== undefined) where.add('updated_at < ?::timestamptz', failedBefore)
  if (errorType !== undefined) where.add("failure->>'type' = ?", errorType)
  await core.ready()
  const hooks = core.middleware.filter((m) => m.revive)
  try {
    const [clock] = await core.executor.query<{ start: string }>('select now()::text as start')
    params[0] = clock!.start
    if (options.dryRun === true) {
      const [row] = await core.executor.query<{ n: number }>(
        `select count(*)::int as n from ${messages} where ${where}`,
        params,
      )
      return { retried: row?.n ?? 0, dryRun: true }
    }
    const n = params.length
    const batch = `with picked as (
  select id from ${messages}
   where ${where} and id > $${n + 1}::uuid
   order by id limit $${n + 2}
   for update skip locked
), retried as (
  update ${messages} m
     set state = 'queued', retries = 0, failure = null, progress = null, eta = now(),
         worker_id = null, cancel_requested = false, updated_at = now()
    from picked where m.id = picked.id
  returning m.id, m.queue
), woken as (
  select pg_notify($${n + 3}, queue) from (select distinct queue from retried) q
)
select id::text as id, (select count(*) from woken)::int as woken from retried order by id`
    let retried = 0
    // The nil UUID sorts before every id.
    let cursor = '00000000-0000-0000-0000-000000000000'
    for (;;) {
      const ids: string[] = await core.executor.transaction(async (tx) => {
        const rows = await tx.query<{ id: string }>(batch, [
          ...params,
          cursor,
          batchSize,
          core.statements.wakeChannel,
        ])
        const batchIds = rows.map((row) => row.id)
        if (batchIds.length > 0) {
          for (const hook of hooks) await hook.revive!({ messageIds: batchIds, executor: tx })
        }
        return batchIds
      })
      retried += ids.length
      if (ids.length > 0) options.onProgress?.({ retried, dryRun: false })
      if (ids.length < batchSize) return { retried, dryRun: false }
      cursor = ids[ids.length - 1]!
    }
  } catch (error) {
    throw wrapError(error, 'retry failed messages')
  }
}
