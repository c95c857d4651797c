import type { Message, ResultOptions } from '../message/message.js'
import { uuid7 } from '../message/uuid7.js'
import { assertMessages } from './pipeline.js'
import type { CompositionHost, RunOptions } from './run-options.js'

/**
 * The result types of a list of messages, in order.
 *
 * @example
 * type Results = GroupResults<[Message<[number], string>, Message<[string], number>]> // [string, number]
 */
export type GroupResults<M extends readonly Message[]> = {
  -readonly [K in keyof M]: M[K] extends Message<readonly unknown[], infer R> ? R : unknown
}

/**
 * Messages sent together that run independently, in any order. Made by
 * `broker.group()`.
 *
 * @example
 * const group = broker.group([thumbnail.message(id, 64), thumbnail.message(id, 256)])
 * await group.run()
 * const [small, large] = await group.results({ timeoutMs: 30_000 }) // with @iddqueue/results
 */
export class Group<M extends readonly Message[] = readonly Message[]> {
  /** The group's id. */
  readonly id: string
  /** The messages, in submission order. */
  readonly messages: M
  readonly #host: CompositionHost

  /** @internal Use `broker.group()`. */
  constructor(host: CompositionHost, messages: M) {
    assertMessages('group', messages, 0)
    this.#host = host
    this.id = uuid7()
    this.messages = Object.freeze([...messages]) as unknown as M
  }

  /**
   * Sends every message atomically, in one statement: all or none. Running
   * it again sends nothing new (the ids exist already).
   *
   * @example
   * await db.transaction().execute(async (trx) => {
   *   await trx.insertInto('imports').values({ id }).execute()
   *   await broker.group(files.map((file) => importFile.message(id, file))).run({ transaction: trx })
   * })
   */
  async run(options: RunOptions = {}): Promise<this> {
    const entries = this.messages.map((message) => ({ message, delayMs: options.delayMs }))
    await this.#host.enqueueMany(entries, { transaction: options.transaction })
    return this
  }

  /**
   * The results in submission order, whatever order the messages finished
   * in. Needs the `@iddqueue/results` plugin and `storeResults` on the
   * actors; a failed message raises its `ResultFailure`.
   *
   * @example
   * const sizes = await group.results({ timeoutMs: 10_000 })
   */
  results(options: ResultOptions = {}): Promise<GroupResults<M>> {
    return Promise.all(this.messages.map((message) => message.result(options))) as Promise<
      GroupResults<M>
    >
  }

  /**
   * How many of the messages have completed successfully (state `done`).
   * Counts stored messages, so it needs no results plugin; after the
   * retention purge removes finished messages, they no longer count.
   *
   * @example
   * console.log(`${await group.completedCount()} of ${group.messages.length} done`)
   */
  completedCount(): Promise<number> {
    return this.#host.countDone(this.messages.map((message) => message.id))
  }
}
