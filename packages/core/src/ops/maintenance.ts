import { assertName } from '../actor/names.js'
import {
  checkFunction,
  checkObject,
  integerOption,
  MAX_RETENTION_MS,
} from '../options/check-option.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { wrapError } from '../runtime/wrap-error.js'
import { DEFAULT_RETENTION_MS, DEFAULT_STALE_AFTER_MS } from '../worker/worker-defaults.js'

/**
 * Options of `broker.purge()`.
 *
 * @example
 * await broker.purge({
 *   olderThanMs: 7 * 24 * 3600 * 1000,
 *   batchSize: 1_000,
 *   onProgress: ({ messages }) => console.log(`${messages} messages deleted so far`),
 * })
 */
export interface PurgeOptions {
  /** Delete finished messages last changed longer ago than this. Default 30 days. */
  readonly olderThanMs?: number | undefined
  /** Rows per statement. Default 5,000. */
  readonly batchSize?: number | undefined
  /** Called after each batch with the running totals. */
  readonly onProgress?: ((progress: PurgeResult) => void) | undefined
}

/**
 * What `broker.purge()` deleted.
 *
 * @example
 * const { messages, deduplicationKeys }: PurgeResult = await broker.purge()
 */
export interface PurgeResult {
  readonly messages: number
  readonly deduplicationKeys: number
  /** True when another worker was purging, so this call did nothing. */
  readonly skipped?: boolean | undefined
}

/**
 * Options of `broker.recover()`.
 *
 * @example
 * const recovered = await broker.recover({ staleAfterMs: 30_000 })
 */
export interface RecoverOptions {
  /** A worker silent for this long is presumed dead: 0 ms to 100 years. Default 6,000 ms. */
  readonly staleAfterMs?: number | undefined
}

/**
 * Options of `broker.flush()`.
 *
 * @example
 * const deleted = await broker.flush({ queue: 'emails' })
 */
export interface FlushOptions {
  /** Only this queue. Default: every queue. */
  readonly queue?: string | undefined
}

/** Rows per purge statement unless `batchSize` says otherwise. */
const DEFAULT_PURGE_BATCH = 5_000

/** @internal Deletes old finished messages and expired keys in bounded batches. */
export async function purge(
  core: BrokerContext,
  options: PurgeOptions & {
    /** Workers purge one at a time: skip when another holds the purge lock. */
    readonly exclusive?: boolean
  } = {},
): Promise<PurgeResult> {
  checkObject('options', options, 'options for purge()', false)
  checkFunction('onProgress', options.onProgress, 'onProgress for purge()')
  const olderThanMs = integerOption('olderThanMs', options.olderThanMs, DEFAULT_RETENTION_MS, {
    min: 0,
    max: MAX_RETENTION_MS,
  })
  // 0 has always meant the default; kept so. A negative or fractional size is refused.
  const batchSize =
    options.batchSize === 0
      ? DEFAULT_PURGE_BATCH
      : integerOption('batchSize', options.batchSize, DEFAULT_PURGE_BATCH, { min: 1 })
  const lockKey = core.ns.lockKey('purge').toString()
  let messages = 0
  let deduplicationKeys = 0
  // Each batch is its own short transaction; with `exclusive`, it first takes
  // the namespace's purge lock and the purge stops if another worker has it.
  const batch = async (statement: string, params: unknown[]): Promise<number | undefined> =>
    core.executor.transaction(async (tx) => {
      if (options.exclusive) {
        const [lock] = await tx.query<{ ok: boolean }>(
          'select pg_try_advisory_xact_lock($1::bigint) as ok',
          [lockKey],
        )
        if (!lock?.ok) return undefined
      }
      const [row] = await tx.query<{ deleted: number }>(statement, params)
      return row?.deleted ?? 0
    })
  try {
    for (;;) {
      const deleted = await batch(core.statements.purgeMessages, [olderThanMs, batchSize])
      if (deleted === undefined) return { messages, deduplicationKeys, skipped: true }
      messages += deleted
      options.onProgress?.({ messages, deduplicationKeys })
      if (deleted < batchSize) break
    }
    for (;;) {
      const deleted = await batch(core.statements.purgeDeduplication, [batchSize])
      if (deleted === undefined) return { messages, deduplicationKeys, skipped: true }
      deduplicationKeys += deleted
      options.onProgress?.({ messages, deduplicationKeys })
      if (deleted < batchSize) break
    }
  } catch (error) {
    throw wrapError(error, 'purge')
  }
  return { messages, deduplicationKeys }
}

/**
 * @internal Requeues the messages of dead workers, and of workers not
 * registered at all when `orphans` is set. Returns how many were recovered.
 */
export async function recover(
  core: BrokerContext,
  options: RecoverOptions & { readonly orphans?: boolean } = {},
): Promise<number> {
  checkObject('options', options, 'options for recover()', false)
  // 0 is allowed: it recovers the messages of every worker, live ones included
  // (tests, tools). Past 100 years, now() - staleAfterMs is not a timestamp.
  const staleAfterMs = integerOption('staleAfterMs', options.staleAfterMs, DEFAULT_STALE_AFTER_MS, {
    min: 0,
    max: MAX_RETENTION_MS,
  })
  try {
    const dead = await core.executor.query<RecoveredRow>(core.statements.recover, [
      staleAfterMs,
      core.statements.wakeChannel,
    ])
    reportRecovered(core, dead)
    if (options.orphans === false) return dead.length
    const orphans = await core.executor.query<RecoveredRow>(core.statements.recoverOrphans, [
      core.statements.wakeChannel,
    ])
    reportRecovered(core, orphans)
    return dead.length + orphans.length
  } catch (error) {
    throw wrapError(error, 'recover messages')
  }
}

/** @internal A message crash recovery requeued (or cancelled), as the recover statements return it. */
export interface RecoveredRow {
  readonly id: string
  readonly queue: string
  readonly state: 'queued' | 'cancelled'
}

/** @internal Emits `messages:recovered` for rows a recovery statement returned (once committed). */
export function reportRecovered(core: BrokerContext, rows: readonly RecoveredRow[]): void {
  if (rows.length === 0 || !core.events.has('messages:recovered')) return
  core.events.emit('messages:recovered', {
    messages: rows.map(({ id, queue, state }) => ({ id, queue, state })),
  })
}

/** @internal Deletes queued messages of one queue or all. */
export async function flush(core: BrokerContext, options: FlushOptions = {}): Promise<number> {
  checkObject('options', options, 'options for flush()', false)
  if (options.queue !== undefined) assertName('queue', options.queue)
  let query = (await core.queries()).deleteFrom('messages').where('state', '=', 'queued')
  if (options.queue !== undefined) query = query.where('queue', '=', options.queue)
  const compiled = query.returning('id').compile()
  try {
    return (await core.executor.query(compiled.sql, compiled.parameters)).length
  } catch (error) {
    throw wrapError(error, 'flush messages')
  }
}
