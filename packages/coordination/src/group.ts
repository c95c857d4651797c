import {
  encodeJson,
  InvalidOptionError,
  MAX_BATCH,
  Message,
  type ResultOptions,
  uuid7,
} from '@iddqueue/core'
import { toExecutor } from '@iddqueue/schema'
import { checkDuration } from './check.js'
import type { CoordinationLatch } from './coordination-setup.js'
import { insertGroupSql, readGroupSql } from './sql/group-sql.js'

/** The latest time a Date holds: the send refuses a delay whose eta falls after it. */
const MAX_DATE_MS = 8_640_000_000_000_000

/** @internal The message option that marks a group member with its group's id. */
export const GROUP_OPTION = 'coordinationGroup'

/**
 * Options of {@link CoordinatedGroup.run}.
 *
 * @example
 * await coord.group([resize.message(id, 64), resize.message(id, 256)]).run({
 *   onCompletion: notify.message(id, 'thumbnails ready'),
 *   onFailure: notify.message(id, 'thumbnails failed'),
 * })
 */
export interface GroupRunOptions {
  /** Sent once, when every member has succeeded. */
  readonly onCompletion?: Message
  /** Sent once, when a member is rejected for good (retries spent, or `throws`) or cancelled. */
  readonly onFailure?: Message
  /** Earliest start of every member, in ms from now. */
  readonly delayMs?: number
  /**
   * How long the group's state lives, in ms (default: the plugin's
   * `groupTtlMs`, one day). A group that finishes later never calls back.
   */
  readonly ttlMs?: number
  /**
   * The caller's transaction (Kysely or postgres.js): the group and its
   * members become visible on commit and vanish on rollback.
   */
  readonly transaction?: unknown
}

/**
 * Messages that run independently, with a callback when all have
 * succeeded and another when one fails for good. Made by
 * `coordination().group()`.
 *
 * Each member's success is recorded in the same transaction that
 * acknowledges it, keyed by the member's id, so a member delivered twice
 * counts once and the completion callback is sent exactly once, in the
 * transaction that settles the last member. The failure callback is sent
 * once, by the first member rejected for good; the group then never
 * completes unless its failed members are retried (`broker.retryFailed()`)
 * and succeed.
 *
 * @example
 * const group = await coord
 *   .group(files.map((file) => importFile.message(importId, file)))
 *   .run({ onCompletion: finishImport.message(importId), onFailure: failImport.message(importId) })
 * console.log(`${await group.completedCount()} of ${group.messages.length} imported`)
 */
export class CoordinatedGroup<M extends readonly Message[] = readonly Message[]> {
  /** The group's id. */
  readonly id: string
  /** The members, in submission order. */
  readonly messages: M
  readonly #latch: CoordinationLatch
  readonly #defaultTtlMs: number

  /** @internal Use `coordination().group()`. */
  constructor(latch: CoordinationLatch, messages: M, defaultTtlMs: number) {
    if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_BATCH) {
      throw new InvalidOptionError(
        `Invalid group: expected an array of 1 to ${MAX_BATCH} messages, got ${Array.isArray(messages) ? messages.length : typeof messages}`,
      )
    }
    const ids = new Set<string>()
    messages.forEach((message, index) => {
      if (!(message instanceof Message))
        throw new InvalidOptionError(
          `Invalid group member ${index}: expected a Message from actor.message()`,
        )
      if (ids.has(message.id))
        throw new InvalidOptionError(
          `Invalid group member ${index}: message ${message.id} is in the group twice`,
        )
      ids.add(message.id)
    })
    this.#latch = latch
    this.#defaultTtlMs = defaultTtlMs
    this.id = uuid7()
    this.messages = Object.freeze(
      messages.map((message) => message.withOptions({ [GROUP_OPTION]: this.id })),
    ) as unknown as M
  }

  /**
   * Records the group, then sends every member atomically in one
   * statement. With `transaction`, both happen in the caller's transaction.
   * The broker must have set the plugin up (`broker.ready()`, or any
   * operation before); otherwise this waits up to 10 s for it.
   *
   * @example
   * await coord.group(members).run({ onCompletion: report.message(batchId) })
   */
  async run(options: GroupRunOptions = {}): Promise<this> {
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionError('Invalid options for group.run(): expected an object')
    const onCompletion = callback('onCompletion', options.onCompletion)
    const onFailure = callback('onFailure', options.onFailure)
    const ttlMs =
      options.ttlMs === undefined
        ? this.#defaultTtlMs
        : checkDuration('group.run()', 'ttlMs', options.ttlMs)
    // The members' delay is checked here too, as the send checks it: a
    // refusal must leave no group row.
    if (options.delayMs !== undefined) {
      const delayMs = checkDuration('group.run()', 'delayMs', options.delayMs, 0)
      if (Date.now() + delayMs > MAX_DATE_MS)
        throw new InvalidOptionError(
          `Invalid delayMs ${delayMs} for group.run(): the eta it gives is past the latest Date (+275760-09-13)`,
        )
    }
    // The transaction is checked before any SQL.
    const transaction =
      options.transaction === undefined ? undefined : toExecutor(options.transaction, 'transaction')
    if (transaction && !transaction.inTransaction)
      throw new InvalidOptionError('Invalid transaction: got a connection pool, not a transaction')
    const setup = await this.#latch.wait('run a group')
    const executor = transaction ?? setup.executor
    const entries = this.messages.map((message) => ({ message, delayMs: options.delayMs }))
    // The group row exists before any member can settle. Outside a
    // transaction, a failed send leaves only a group row that expires.
    await executor.query(insertGroupSql(setup.ns), [
      this.id,
      this.messages.length,
      onCompletion,
      onFailure,
      ttlMs,
    ])
    await setup.enqueueMany(entries, { transaction: options.transaction })
    return this
  }

  /**
   * How many members have succeeded, as recorded by the settle
   * transactions (each member once). 0 once the group's TTL passed and
   * `purge()` removed it.
   *
   * @example
   * const done = await group.completedCount()
   */
  async completedCount(): Promise<number> {
    const setup = await this.#latch.wait('count a group')
    const [row] = await setup.executor.query<{ done: number }>(readGroupSql(setup.ns), [this.id])
    return row?.done ?? 0
  }

  /**
   * The members' results in submission order. Needs `@iddqueue/results`
   * and `storeResults` on the actors.
   *
   * @example
   * const sizes = await group.results({ timeoutMs: 10_000 })
   */
  results(options: ResultOptions = {}): Promise<unknown[]> {
    return Promise.all(this.messages.map((message) => message.result(options)))
  }
}

/** A callback message, encoded (its arguments checked) before anything is stored. */
function callback(name: string, message: unknown): string | null {
  if (message === undefined) return null
  if (!(message instanceof Message))
    throw new InvalidOptionError(
      `Invalid ${name}: expected a Message from actor.message(), got ${typeof message}`,
    )
  return encodeJson(message.toJSON(), name)
}
