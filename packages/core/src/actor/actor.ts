import type { SendOptions } from '../enqueue/enqueue-options.js'
import type { Message } from '../message/message.js'
import type { ActorArgs, ActorResult, Handler, StepArgs } from './actor-context.js'
import type { ResolvedActorOptions } from './actor-options.js'

/**
 * Options of `actor.sendWithOptions`: the arguments plus send options.
 *
 * @example
 * const options: SendWithOptions<[to: string]> = {
 *   args: ['ada@example.com'],
 *   delayMs: 60_000,
 *   dedupKey: 'welcome:ada',
 *   dedupTtlMs: 3_600_000,
 * }
 * await sendEmail.sendWithOptions(options)
 */
export interface SendWithOptions<Args extends readonly unknown[]> extends SendOptions {
  readonly args: Args
  /** Message-level options stored with the message (plugin data). */
  readonly options?: Readonly<Record<string, unknown>>
}

/**
 * Options of `actor.messageWithOptions`.
 *
 * @example
 * const urgent = resize.messageWithOptions({ args: ['img_1', 640], priority: -10 })
 * await broker.enqueueMany([urgent, resize.message('img_2', 320)])
 */
export interface MessageWithOptions<Args extends readonly unknown[]> {
  readonly args: Args
  readonly priority?: number
  readonly options?: Readonly<Record<string, unknown>>
}

/**
 * A declared actor: send it messages, typed by its handler.
 *
 * @example
 * const add = broker.actor('add', (a: number, b: number) => a + b)
 * await add.send(1, 2)                                   // typed: (a: number, b: number)
 * await add.sendWithOptions({ args: [1, 2], delayMs: 5_000 })
 * const batch = [add.message(1, 2), add.message(3, 4)]   // unsent, for enqueueMany or pipelines
 */
export interface Actor<H extends Handler = Handler> {
  readonly name: string
  readonly queue: string
  readonly options: ResolvedActorOptions & Readonly<Record<string, unknown>>
  readonly handler: H
  /** Sends a message now; resolves when it is stored. */
  send(...args: ActorArgs<H>): Promise<Message<ActorArgs<H>, ActorResult<H>>>
  /** Sends with a delay, eta, priority, deduplication key or the caller's transaction. */
  sendWithOptions(
    options: SendWithOptions<ActorArgs<H>>,
  ): Promise<Message<ActorArgs<H>, ActorResult<H>>>
  /** Builds an unsent message, for `enqueueMany`, pipelines and groups. */
  message(...args: ActorArgs<H>): Message<ActorArgs<H>, ActorResult<H>>
  /**
   * Builds an unsent pipeline step: a message with every argument but the
   * last, which the previous step's result fills in when the pipeline runs.
   *
   * @example
   * const fetchPrice = broker.actor('fetch_price', async (sku: string) => 4_500)
   * const discount = broker.actor('discount', (percent: number, cents: number) => cents * (1 - percent / 100))
   * await broker.pipeline([fetchPrice.message('lamp'), discount.step(10)]).run()
   */
  step(...args: StepArgs<H>): Message<ActorArgs<H>, ActorResult<H>>
  /** Builds an unsent message with a priority or message-level options. */
  messageWithOptions(
    options: MessageWithOptions<ActorArgs<H>>,
  ): Message<ActorArgs<H>, ActorResult<H>>
}

/** @internal What an actor needs from its broker. */
export interface ActorHost {
  buildMessage(
    actor: string,
    queue: string,
    args: readonly unknown[],
    priority: number,
    options: Readonly<Record<string, unknown>>,
  ): Message
  enqueue(message: Message, options: SendOptions): Promise<Message>
}

/** @internal */
export function createActor<H extends Handler>(
  host: ActorHost,
  name: string,
  handler: H,
  options: ResolvedActorOptions & Readonly<Record<string, unknown>>,
): Actor<H> {
  type M = Message<ActorArgs<H>, ActorResult<H>>
  const build = (
    args: readonly unknown[],
    priority = options.priority,
    extra: Readonly<Record<string, unknown>> = {},
  ) => host.buildMessage(name, options.queue, args, priority, extra) as M
  return Object.freeze({
    name,
    queue: options.queue,
    options,
    handler,
    send: (...args: ActorArgs<H>) => host.enqueue(build(args), {}) as Promise<M>,
    sendWithOptions: ({ args, options: extra, ...send }: SendWithOptions<ActorArgs<H>>) =>
      host.enqueue(build(args, options.priority, extra), send) as Promise<M>,
    message: (...args: ActorArgs<H>) => build(args),
    step: (...args: StepArgs<H>) => build(args),
    messageWithOptions: ({ args, priority, options: extra }: MessageWithOptions<ActorArgs<H>>) =>
      build(args, priority ?? options.priority, extra),
  })
}
