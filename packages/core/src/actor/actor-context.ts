import type { Message } from '../message/message.js'

/**
 * What a handler receives after its arguments: the message, the attempt
 * number and an `AbortSignal` that aborts on the time limit, on a graceful
 * worker stop (with `notifyShutdown`) and on cancellation.
 *
 * It is passed in the handler's last declared parameter whenever the handler
 * declares more parameters than the message has arguments, so declare it
 * last, after any optional parameters or parameters with default values.
 * A handler with optional or default parameters must declare it even when
 * it does not use it (`_ctx?: ActorContext`), otherwise an omitted optional
 * argument would receive the context (`ContextRule` checks a handler type
 * for this, and `broker.actor()` applies it). A handler whose last parameter
 * is a rest parameter or has a default value never receives it.
 *
 * A handler must honour its signal to be stopped: Node cannot interrupt a
 * synchronous loop, and a handler that ignores its signal keeps running.
 *
 * @example
 * const download = broker.actor('download', async (url: string, ctx: ActorContext) => {
 *   const response = await fetch(url, { signal: ctx.signal })
 *   return { status: response.status, attempt: ctx.attempt }
 * })
 */
export interface ActorContext<Args extends readonly unknown[] = readonly unknown[]> {
  readonly message: Message<Args>
  /** 1 on the first attempt; each retry adds one. */
  readonly attempt: number
  /** Failed attempts so far that were retried. */
  readonly retries: number
  readonly signal: AbortSignal
  /**
   * Reports the handler's progress: a JSON value of at most 4,096 bytes
   * (`MAX_PROGRESS_BYTES`), stored on the message and shown by
   * `broker.getMessage()` and `iddqueue show`. Throttled: the first call
   * writes at once, later ones at most once a second
   * (`PROGRESS_INTERVAL_MS`), the last value of each second winning, and
   * the last value is written with the outcome. Resolves once the value is
   * written or scheduled. A value that is not JSON throws
   * `InvalidPayloadError`, one too large `PayloadTooLargeError`. A retry
   * clears it. Never fails the handler because the database is unreachable.
   *
   * @example
   * broker.actor('import_rows', async (file: string, ctx: ActorContext) => {
   *   const rows = await load(file)
   *   for (const [i, row] of rows.entries()) {
   *     await save(row)
   *     await ctx.progress({ done: i + 1, total: rows.length })
   *   }
   * })
   */
  progress(value: unknown): Promise<void>
}

/**
 * A handler: the actor's arguments, then optionally an {@link ActorContext}.
 *
 * @example
 * function declareOnJobs<H extends Handler>(name: string, handler: H): Actor<H> {
 *   return broker.actor(name, handler, { queue: 'jobs' })
 * }
 */
export type Handler = (...args: never[]) => unknown

/**
 * The arguments `send()` takes for a handler: its parameters without a
 * trailing {@link ActorContext}. A trailing parameter typed `any` is an
 * argument (`any` would otherwise match the context).
 *
 * @example
 * const handler = (to: string, subject: string, ctx: ActorContext) => ctx.attempt
 * type Args = ActorArgs<typeof handler> // [to: string, subject: string]
 */
export type ActorArgs<H extends Handler> =
  IsContext<LastOf<Required<Parameters<H>>>> extends true ? DropLast<Parameters<H>> : Parameters<H>

type LastOf<T extends readonly unknown[]> = T extends readonly [...unknown[], infer L] ? L : never

/** True for `ActorContext` and `ActorContext | undefined`; false for `any`, `unknown`, `undefined`, `never`. */
type IsContext<T> = 0 extends 1 & T
  ? false
  : [T] extends [never]
    ? false
    : [T] extends [undefined]
      ? false
      : [Exclude<T, undefined>] extends [ActorContext<infer _>]
        ? true
        : false

/**
 * The arguments of a pipeline step built with `actor.step()`: every argument
 * of the handler but the last, which the previous step's result fills in.
 *
 * @example
 * const applyDiscount = async (percent: number, cents: number) => cents * (1 - percent / 100)
 * type Step = StepArgs<typeof applyDiscount> // [percent: number]
 */
export type StepArgs<H extends Handler> = DropLast<ActorArgs<H>>

/** A tuple without its last element, keeping which elements are optional. */
type DropLast<T extends readonly unknown[]> = number extends T['length']
  ? T
  : T extends readonly []
    ? []
    : T extends readonly [infer Head, ...infer Rest]
      ? Rest extends readonly []
        ? []
        : [Head, ...DropLast<Rest>]
      : T extends readonly [(infer Head)?, ...infer Rest]
        ? Rest extends readonly []
          ? []
          : [Head?, ...DropLast<Rest>]
        : T

/**
 * What `await message.result()` returns for a handler.
 *
 * @example
 * const handler = async (a: number, b: number) => a + b
 * type Sum = ActorResult<typeof handler> // number
 */
export type ActorResult<H extends Handler> = Awaited<ReturnType<H>>

/** Whether a parameter tuple has an optional element (a `?` or a default value). */
type HasOptional<P extends readonly unknown[]> = number extends P['length']
  ? false
  : P extends readonly []
    ? false
    : P extends readonly [unknown, ...infer Rest]
      ? HasOptional<Rest>
      : true

/**
 * `H` when iddqueue can tell where its context goes, else a type no function
 * matches, naming the fix: a handler with optional parameters must declare
 * the context last, or an omitted optional argument would receive it.
 *
 * `broker.actor()` checks every handler with it. The runtime cannot: once
 * compiled, `(a, b?) => …` and `(a, ctx) => …` are the same function, and
 * the worker puts the context in the last declared parameter whenever the
 * message has fewer arguments. A default value last (`(a, by = 1)`) is
 * refused too, as TypeScript types it as optional (`by?: number`); the
 * runtime, which reads the source, never puts the context there. Use it to
 * check handlers in your own wrappers (`handler: H & ContextRule<H>`).
 *
 * @example
 * const ok: ContextRule<(a: number, b?: number, ctx?: ActorContext) => number> = (a, b = 0) => a + b
 * // ContextRule<(a: number, b?: number) => number> is refused: declare `_ctx?: ActorContext` last
 */
export type ContextRule<H extends Handler> =
  HasOptional<Parameters<H>> extends true
    ? IsContext<LastOf<Required<Parameters<H>>>> extends true
      ? H
      : {
          readonly 'iddqueue: a handler with optional or default parameters must declare `ctx?: ActorContext` as its last parameter': never
        }
    : H
