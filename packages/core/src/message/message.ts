import { IddqueueError } from '../errors.js'

/**
 * Options of {@link Message.result}.
 *
 * @example
 * const sum = await message.result({ block: true, timeoutMs: 30_000 }) // with @iddqueue/results
 */
export interface ResultOptions {
  /** Wait for the result when it is not stored yet. Default `true`. */
  readonly block?: boolean
  /** How long to wait. Default 10,000 ms. */
  readonly timeoutMs?: number
}

/** @internal What a message needs from its broker: the results capability, when a plugin provides it. */
export interface MessageHost {
  readResult(message: Message, options: ResultOptions): Promise<unknown>
}

/**
 * A message as JSON: what callbacks and `onRetryExhausted` actors receive.
 *
 * @example
 * broker.actor('on_done', (message: EncodedMessage, result: unknown) => {
 *   console.log(`${message.actor} ${message.id} returned`, result)
 * })
 */
export interface EncodedMessage {
  readonly id: string
  readonly actor: string
  readonly queue: string
  readonly args: readonly unknown[]
  readonly priority: number
  readonly options: Readonly<Record<string, unknown>>
  /** Earliest start (ISO 8601) when the message was delayed. */
  readonly eta?: string
}

declare const resultType: unique symbol

/**
 * A message to an actor: its id, arguments and options. Built unsent by
 * `actor.message(...)`, returned by `send()`, delivered to handlers as
 * `ctx.message`.
 *
 * `Result` is the handler's result type, so `await message.result()` is typed
 * (that needs the `@iddqueue/results` plugin).
 *
 * @example
 * const message = await add.send(1, 2)
 * console.log(message.id, message.queue, message.args) // '0193…', 'default', [1, 2]
 * const sum: number = await message.result()           // with @iddqueue/results
 */
export class Message<Args extends readonly unknown[] = readonly unknown[], Result = unknown> {
  declare readonly [resultType]?: Result
  #host: MessageHost | undefined = undefined

  /**
   * A message not bound to a broker: `result()` throws until a broker
   * builds it. Build messages with `actor.message()` or `broker.message()`.
   */
  constructor(
    /** A UUID (version 7 when iddqueue made it). */
    readonly id: string,
    readonly actor: string,
    readonly queue: string,
    readonly args: Args,
    /** Smaller runs first. */
    readonly priority: number,
    /** Message-level options: pipeline steps, callbacks and plugin data. */
    readonly options: Readonly<Record<string, unknown>>,
    /** Earliest start, when the message was sent with a delay or an eta. */
    readonly eta?: Date,
  ) {}

  /** @internal Binds `message` to the broker that reads its result. */
  static bind<M extends Message<readonly unknown[], unknown>>(
    message: M,
    host: MessageHost | undefined,
  ): M {
    message.#host = host
    return message
  }

  /**
   * The handler's result, once stored. Needs the `@iddqueue/results` plugin
   * and an actor declared with `storeResults: true`.
   *
   * Waits on a notification (not polling) up to `timeoutMs`, then throws
   * `ResultTimeout`. A failed message throws `ResultFailure`, a cancelled one
   * `ResultCancelled`.
   *
   * @example
   * const message = await add.send(1, 2)
   * const sum = await message.result({ timeoutMs: 5_000 })
   */
  async result(options: ResultOptions = {}): Promise<Result> {
    if (!this.#host) {
      throw new IddqueueError(
        `Message ${this.id} is not bound to a broker; send it through an actor`,
      )
    }
    return (await this.#host.readResult(this, options)) as Result
  }

  /**
   * A copy of this message with `options` merged over its own, keeping its
   * id and its broker: how a plugin attaches its data to a message before it
   * is sent.
   *
   * @example
   * const tagged = resize.message('img_1', 640).withOptions({ tenant: 'acme' })
   * await broker.enqueue(tagged)
   */
  withOptions(options: Readonly<Record<string, unknown>>): Message<Args, Result> {
    return this.with({ options: { ...this.options, ...options } })
  }

  /** @internal A copy with other fields. */
  with(
    fields: Partial<Pick<EncodedMessage, 'args' | 'options' | 'priority' | 'queue'>> & {
      id?: string
      eta?: Date | undefined
    },
  ): Message<Args, Result> {
    const copy = new Message<Args, Result>(
      fields.id ?? this.id,
      this.actor,
      fields.queue ?? this.queue,
      (fields.args ?? this.args) as Args,
      fields.priority ?? this.priority,
      fields.options ?? this.options,
      'eta' in fields ? fields.eta : this.eta,
    )
    copy.#host = this.#host
    return copy
  }

  /** The message as plain JSON. */
  toJSON(): EncodedMessage {
    return {
      id: this.id,
      actor: this.actor,
      queue: this.queue,
      args: this.args,
      priority: this.priority,
      options: this.options,
      ...(this.eta ? { eta: this.eta.toISOString() } : {}),
    }
  }
}
