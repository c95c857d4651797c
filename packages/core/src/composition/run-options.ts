import type { EnqueueEntry, EnqueueManyOptions, SendOptions } from '../enqueue/enqueue-options.js'
import type { Message } from '../message/message.js'

/**
 * Options of `pipeline.run()` and `group.run()`.
 *
 * @example
 * await db.transaction().execute(async (trx) => {
 *   await broker.group([thumbnail.message(id, 64), thumbnail.message(id, 256)]).run({ transaction: trx })
 * })
 * await broker.pipeline([resize.message(id), upload.message()]).run({ delayMs: 5_000 })
 */
export interface RunOptions {
  /** Earliest start of the first step (pipeline) or of every message (group), in ms from now. */
  readonly delayMs?: number | undefined
  /**
   * The caller's transaction (Kysely or postgres.js): the messages become
   * visible on commit and vanish on rollback.
   */
  readonly transaction?: unknown | undefined
}

/** @internal What pipelines and groups need from their broker. */
export interface CompositionHost {
  enqueue(message: Message, options: SendOptions): Promise<Message>
  enqueueMany(
    entries: readonly (Message | EnqueueEntry)[],
    options: EnqueueManyOptions,
  ): Promise<Message[]>
  /** How many of these messages are done. */
  countDone(ids: readonly string[]): Promise<number>
}
