import { Message, type ResultOptions } from '../message/message.js'
import { uuid7 } from '../message/uuid7.js'
import { PIPELINE_OPTION, type PipelineState } from '../middleware/pipeline-step.js'
import { labelledRefusal, refuseOption } from '../options/check-option.js'
import type { CompositionHost, RunOptions } from './run-options.js'

/**
 * The largest pipeline or group.
 *
 * @example
 * for (let i = 0; i < messages.length; i += MAX_COMPOSITION) {
 *   await broker.group(messages.slice(i, i + MAX_COMPOSITION)).run()
 * }
 */
export const MAX_COMPOSITION = 1000

/**
 * The result type of the last message of a list of messages.
 *
 * @example
 * type Last = LastResult<[Message<[string], number>, Message<[number], boolean>]> // boolean
 */
export type LastResult<M extends readonly Message[]> = M extends readonly [
  ...(readonly Message[]),
  Message<readonly unknown[], infer R>,
]
  ? R
  : unknown

/** @internal Checks the messages of a pipeline or group. */
export function assertMessages(
  kind: 'pipeline' | 'group',
  messages: unknown,
  min: number,
): asserts messages is readonly Message[] {
  if (!Array.isArray(messages))
    throw labelledRefusal('messages', messages, 'an array of messages', kind)
  if (messages.length < min || messages.length > MAX_COMPOSITION) {
    const expected = `${min} to ${MAX_COMPOSITION}`
    throw refuseOption(`Invalid ${kind} of ${messages.length} messages: expected ${expected}`, {
      option: 'messages',
      value: messages,
      expected: `${expected} messages`,
    })
  }
  const ids = new Set<string>()
  messages.forEach((message: unknown, index) => {
    if (!(message instanceof Message)) {
      throw labelledRefusal(
        `messages[${index}]`,
        message,
        'a Message from actor.message() or broker.message()',
        `${kind} entry ${index}`,
      )
    }
    // The same id twice would be written once: the second step would never run.
    if (ids.has(message.id)) {
      throw refuseOption(
        `Invalid ${kind} entry ${index}: message ${message.id} appears twice; build a new message for each entry`,
        { option: `messages[${index}]`, value: message, expected: 'a message not already listed' },
      )
    }
    ids.add(message.id)
  })
}

/**
 * Messages that run one after the other, each receiving the previous one's
 * result as its last argument. Made by `broker.pipeline()`.
 *
 * Only the first step is sent by `run()`; it carries the remaining steps, and
 * the worker sends each next step (with its own id) in the transaction that
 * records the previous one's success. A step that fails for good stops the
 * pipeline: the steps after it are never sent. Delivery stays at least once.
 *
 * @example
 * const pipeline = broker.pipeline([fetchPage.message(url), parse.message(), store.message('pages')])
 * await pipeline.run()
 * // parse(html), then store('pages', parsed)
 * const stored = await pipeline.result({ timeoutMs: 30_000 }) // with @iddqueue/results
 */
export class Pipeline<Result = unknown> {
  /** The pipeline's id, carried by its steps. */
  readonly id: string
  /** The steps, in order, as given. */
  readonly messages: readonly Message[]
  readonly #host: CompositionHost

  /** @internal Use `broker.pipeline()`. */
  constructor(host: CompositionHost, messages: readonly Message[]) {
    assertMessages('pipeline', messages, 1)
    this.#host = host
    this.id = uuid7()
    this.messages = Object.freeze([...messages])
    if (this.messages.some((message) => PIPELINE_OPTION in message.options)) {
      throw refuseOption(
        `Invalid pipeline: a message already belongs to a pipeline (option ${PIPELINE_OPTION}); build new messages`,
        { option: 'messages', value: messages, expected: 'messages not already in a pipeline' },
      )
    }
  }

  /**
   * Sends the first step, with the others attached. Running it again sends
   * nothing new (the first step's id exists already).
   *
   * @example
   * await broker.pipeline([resize.message(imageId), upload.message()]).run({ delayMs: 5_000 })
   */
  async run(options: RunOptions = {}): Promise<this> {
    const [first, ...rest] = this.messages
    const state: PipelineState = { id: this.id, steps: rest.map((message) => message.toJSON()) }
    const head = first!.with({
      options: rest.length > 0 ? { ...first!.options, [PIPELINE_OPTION]: state } : first!.options,
    })
    await this.#host.enqueue(head, { delayMs: options.delayMs, transaction: options.transaction })
    return this
  }

  /**
   * The last step's result. Needs the `@iddqueue/results` plugin and
   * `storeResults` on the last step's actor. A pipeline stopped by a failed
   * step never sends its last step, so waiting for it times out.
   *
   * @example
   * const total = await pipeline.result({ timeoutMs: 10_000 })
   */
  result(options: ResultOptions = {}): Promise<Result> {
    return this.messages[this.messages.length - 1]!.result(options) as Promise<Result>
  }
}
