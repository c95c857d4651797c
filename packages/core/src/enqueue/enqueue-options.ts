import {
  describeValue,
  type Executor,
  InvalidOptionError,
  isExecutor,
  isKysely,
  isPostgresJs,
  toExecutor,
} from '@iddqueue/schema'
import type { Message } from '../message/message.js'
import { checkPriority, dateTime, labelledRefusal, refuseOption } from '../options/check-option.js'

/**
 * Per-message options of a send.
 *
 * @example
 * const options: EnqueueOptions = { delayMs: 60_000, priority: -1 }
 * await broker.enqueue(add.message(1, 2), options)
 * await broker.enqueueMany([{ message: add.message(3, 4), ...options }])
 */
export interface EnqueueOptions {
  /** Earliest start, in ms from now (PostgreSQL's clock). A delay is not an exact time. */
  readonly delayMs?: number | undefined
  /** Earliest start as an absolute time (a Date or epoch ms). Not with `delayMs`. */
  readonly eta?: Date | number | undefined
  /** Overrides the actor's priority; smaller runs first. */
  readonly priority?: number | undefined
  /**
   * Deduplication key, scoped to the message's queue. While the key is live,
   * sending again returns the original message and writes nothing.
   */
  readonly dedupKey?: string | undefined
  /** How long the key stays live, in ms (PostgreSQL's clock). Required with `dedupKey`. */
  readonly dedupTtlMs?: number | undefined
  /**
   * What a send with a live `dedupKey` does. `'keep'` (the default) returns
   * the original message and writes nothing. `'replace'` debounces: if the
   * message holding the key is still queued, its actor, arguments, options,
   * priority and eta become this send's (it keeps its id and enqueue time);
   * if it has started (or finished, or is gone), this send stores a new
   * message that takes the key over. Either way the key's TTL restarts.
   *
   * @example
   * // Reindex a document 5 s after its last edit, once, with the last edit's args.
   * await reindex.sendWithOptions({
   *   args: [docId, revision],
   *   delayMs: 5_000,
   *   dedupKey: `reindex:${docId}`,
   *   dedupTtlMs: 3_600_000,
   *   dedupMode: 'replace',
   * })
   */
  readonly dedupMode?: DedupMode | undefined
}

/**
 * How a send with a live deduplication key behaves: `'keep'` returns the
 * original message (the default), `'replace'` debounces (see
 * {@link EnqueueOptions.dedupMode}).
 *
 * @example
 * const mode: DedupMode = 'replace'
 * await search.sendWithOptions({ args: ['q'], dedupKey: 'search', dedupTtlMs: 60_000, dedupMode: mode })
 */
export type DedupMode = 'keep' | 'replace'

/**
 * Options of a single send.
 *
 * @example
 * await sql.begin(async (tx) => {
 *   await tx`update orders set status = 'paid' where id = ${orderId}`
 *   await broker.enqueue(sendReceipt.message(orderId), {
 *     dedupKey: `receipt:${orderId}`,
 *     dedupTtlMs: 86_400_000,
 *     transaction: tx,
 *   })
 * })
 */
export interface SendOptions extends EnqueueOptions {
  /**
   * The caller's transaction (a Kysely transaction or a postgres.js `sql.begin`
   * transaction, or the `Executor` a plugin's `executor.transaction()` gives):
   * the message becomes visible on commit and vanishes on rollback. The
   * broker never commits, rolls back or retries it.
   */
  readonly transaction?: unknown | undefined
}

/**
 * One entry of `enqueueMany`: a message and its own options.
 *
 * @example
 * const entry: EnqueueEntry = { message: add.message(1, 2), eta: new Date('2030-01-01T00:00:00Z') }
 * await broker.enqueueMany([entry, add.message(3, 4)])
 */
export interface EnqueueEntry extends EnqueueOptions {
  readonly message: Message
}

/**
 * Options of `enqueueMany`.
 *
 * @example
 * await db.transaction().execute(async (trx) => {
 *   await broker.enqueueMany([add.message(1, 2), add.message(3, 4)], { transaction: trx })
 * })
 */
export interface EnqueueManyOptions {
  /**
   * As for {@link SendOptions.transaction}. A batch with deduplication keys
   * or enqueue middleware runs in a savepoint inside it, so its failure
   * leaves the transaction usable; a plain batch is one statement, and if
   * that statement fails in PostgreSQL the transaction is aborted.
   */
  readonly transaction?: unknown | undefined
}

/**
 * The largest batch `enqueueMany` accepts.
 *
 * @example
 * for (let i = 0; i < messages.length; i += MAX_BATCH) {
 *   await broker.enqueueMany(messages.slice(i, i + MAX_BATCH))
 * }
 */
export const MAX_BATCH = 1000

/** @internal The largest PostgreSQL `integer`. */
export const INT4_MAX = 2_147_483_647

/**
 * The range of times both a JavaScript Date and PostgreSQL's timestamptz
 * hold (4714-11-24 BC to 275760-09-13): outside it the insert would fail in
 * SQL, aborting a caller's transaction, instead of here.
 */
const MIN_ETA_MS = -210_866_803_200_000
const MAX_ETA_MS = 8_640_000_000_000_000

/** @internal Checks per-message options; names the option and the entry. */
export function assertEnqueueOptions(options: EnqueueOptions, where: string): void {
  // The text keeps its established `<where>: invalid <option> ...` wording.
  const fail = (option: string, value: unknown, expected: string, text: string): never => {
    throw refuseOption(`${where}: ${text}`, { option, value, expected })
  }
  const { delayMs, eta, priority, dedupKey, dedupTtlMs, dedupMode } = options
  if (
    delayMs !== undefined &&
    (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0)
  ) {
    const expected = 'a finite number of milliseconds, 0 or more'
    fail(
      'delayMs',
      delayMs,
      expected,
      `invalid delayMs ${describeValue(delayMs)}: expected ${expected}`,
    )
  }
  if (delayMs !== undefined && Date.now() + delayMs > MAX_ETA_MS) {
    fail(
      'delayMs',
      delayMs,
      'a delay whose eta is at most +275760-09-13',
      `invalid delayMs ${describeValue(delayMs)}: the eta it gives is past the latest Date (+275760-09-13)`,
    )
  }
  if (eta !== undefined) {
    // A combination, not one option's value: no option/value/expected fits.
    if (delayMs !== undefined)
      throw new InvalidOptionError(`${where}: give delayMs or eta, not both`)
    const ms = eta instanceof Date ? dateTime(eta) : eta
    if (typeof ms !== 'number' || !Number.isFinite(ms)) {
      const expected = 'a valid Date or epoch milliseconds'
      fail('eta', eta, expected, `invalid eta ${describeValue(eta)}: expected ${expected}`)
    }
    if (ms < MIN_ETA_MS || ms > MAX_ETA_MS) {
      const expected = `a time from 4714-11-24 BC to +275760-09-13 (epoch ms ${MIN_ETA_MS} to ${MAX_ETA_MS})`
      fail('eta', eta, expected, `invalid eta ${describeValue(eta)}: expected ${expected}`)
    }
  }
  checkPriority(priority, { where })
  if (dedupMode !== undefined) {
    if (dedupMode !== 'keep' && dedupMode !== 'replace') {
      const expected = "'keep' or 'replace'"
      fail(
        'dedupMode',
        dedupMode,
        expected,
        `invalid dedupMode ${describeValue(dedupMode)}: expected ${expected}`,
      )
    }
    if (dedupKey === undefined) {
      fail(
        'dedupKey',
        dedupKey,
        `a dedupKey with dedupMode ${dedupMode}`,
        `dedupMode ${dedupMode} needs a dedupKey`,
      )
    }
  }
  if (dedupKey !== undefined || dedupTtlMs !== undefined) {
    if (
      typeof dedupKey !== 'string' ||
      dedupKey.length === 0 ||
      dedupKey.length > 512 ||
      dedupKey.includes('\u0000') ||
      // Sent as UTF-8, an unpaired surrogate would become U+FFFD and collide with other keys.
      !dedupKey.isWellFormed()
    ) {
      const expected =
        'a non-empty string of at most 512 characters, without \\u0000 or unpaired surrogates'
      fail(
        'dedupKey',
        dedupKey,
        expected,
        `invalid dedupKey ${describeValue(dedupKey)}: expected ${expected}`,
      )
    }
    // Past 2^53 ms (285,000 years) the expiry would overflow PostgreSQL's interval.
    if (typeof dedupTtlMs !== 'number' || !Number.isSafeInteger(dedupTtlMs) || dedupTtlMs <= 0) {
      const expected = `a positive integer of milliseconds (at most ${Number.MAX_SAFE_INTEGER}) with dedupKey`
      fail(
        'dedupTtlMs',
        dedupTtlMs,
        expected,
        `invalid dedupTtlMs ${describeValue(dedupTtlMs)}: expected ${expected}`,
      )
    }
  }
}

/**
 * @internal The executor for a caller's transaction. Refuses anything that is
 * not a transaction, before any SQL runs. An `Executor` inside a transaction
 * (a plugin's settle hook) is accepted as it is.
 */
export function transactionExecutor(transaction: unknown): Executor {
  if (!isKysely(transaction) && !isPostgresJs(transaction) && !isExecutor(transaction)) {
    throw labelledRefusal(
      'transaction',
      transaction,
      'a Kysely transaction (db.transaction().execute(trx => ...)) or a postgres.js transaction (sql.begin(tx => ...))',
    )
  }
  const executor = toExecutor(transaction, 'transaction')
  if (!executor.inTransaction) {
    throw refuseOption(
      'Invalid transaction: got a connection pool, not a transaction; pass the trx of db.transaction().execute(trx => ...) or the tx of sql.begin(tx => ...)',
      {
        option: 'transaction',
        value: transaction,
        expected: 'a transaction, not a connection pool',
      },
    )
  }
  return executor
}
