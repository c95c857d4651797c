import { IddqueueError, type IddqueueErrorOptions, InvalidOptionError } from '@iddqueue/schema'

export { IddqueueError, InvalidIdentifierError, InvalidOptionError } from '@iddqueue/schema'

/**
 * A transactional actor cannot run as configured: the broker cannot open
 * transactions of its own (it was given a transaction, not a pool), its pool
 * is too small to leave the worker its own connections, or a worker's
 * `transactionalConcurrency` asks for more connections than the pool allows.
 * Thrown by `broker.actor()` and `broker.worker()`, before any SQL. A
 * subclass of `InvalidOptionError`.
 *
 * @example
 * try {
 *   broker.worker({ transactionalConcurrency: 50 })
 * } catch (error) {
 *   if (TransactionalActorError.isInstance(error)) console.error(error.message)
 * }
 */
export class TransactionalActorError extends InvalidOptionError {}

/**
 * PostgreSQL could not be reached, or the connection broke during an
 * operation. The `cause` holds the driver's error. Whether a send that failed
 * this way was stored is unknown: retry with a deduplication key to be safe.
 *
 * @example
 * try {
 *   await sendEmail.send('a@example.com')
 * } catch (error) {
 *   if (BrokerConnectionError.isInstance(error)) console.error('database unavailable', error.cause)
 * }
 */
export class BrokerConnectionError extends IddqueueError {}

/**
 * The iddqueue tables are missing: run `broker.migrate()` (or apply
 * `generateInitSql()`) first.
 *
 * @example
 * await broker.migrate() // avoids SchemaNotReadyError on first use
 */
export class SchemaNotReadyError extends IddqueueError {}

/**
 * A message argument that would not survive JSON (BigInt, function, cycle,
 * Date, `\u0000`, ...). The message names the argument path.
 *
 * @example
 * await actor.send({ when: new Date() }) // InvalidPayloadError: args[0].when is a Date ...
 */
export class InvalidPayloadError extends IddqueueError {}

/**
 * The encoded arguments and options pass the broker's `maxPayloadBytes`.
 *
 * @example
 * await actor.send('x'.repeat(2_000_000)) // PayloadTooLargeError
 */
export class PayloadTooLargeError extends IddqueueError {}

/**
 * Why a worker rejected a message: it names an actor this worker does not
 * declare. Sending to an actor declared elsewhere is allowed (a producer-only
 * service uses `broker.message()`); the worker that claims it decides.
 *
 * @example
 * const rows = await broker.listFailed()
 * const strays = rows.items.filter((m) => m.failure?.type === 'UnknownActorError')
 */
export class UnknownActorError extends IddqueueError {}

/**
 * The broker was closed; it accepts no more work.
 *
 * @example
 * await broker.close()
 * await actor.send() // BrokerClosedError
 */
export class BrokerClosedError extends IddqueueError {}

/**
 * Options of {@link Retry}.
 *
 * @example
 * broker.actor('sync', async (id: string) => {
 *   const response = await fetch(`https://api.example.com/sync/${id}`)
 *   if (response.status === 503) throw new Retry({ delayMs: 60_000, cause: new Error('503') })
 * })
 */
export interface RetryOptions extends IddqueueErrorOptions {
  /** Wait this long before the next attempt, instead of the backoff. */
  readonly delayMs?: number | undefined
}

/**
 * Thrown by a handler to ask for another attempt, after `delayMs` when given
 * (otherwise the usual backoff). It counts against `maxRetries`.
 *
 * @example
 * broker.actor('poll', async (url: string) => {
 *   const response = await fetch(url)
 *   if (response.status === 429) throw new Retry({ delayMs: 30_000 })
 * })
 */
export class Retry extends IddqueueError {
  readonly delayMs: number | undefined
  constructor(options: RetryOptions = {}) {
    super(
      options.delayMs === undefined
        ? 'Retry requested'
        : `Retry requested in ${options.delayMs} ms`,
      options,
    )
    this.delayMs = options.delayMs
  }
}

/**
 * The reason a handler's `signal` aborts when its `timeLimitMs` passes. The
 * attempt fails and follows the retry policy.
 *
 * @example
 * broker.actor('slow', async (ctx: ActorContext) => {
 *   ctx.signal.throwIfAborted() // throws TimeLimitExceeded once the limit has passed
 * }, { timeLimitMs: 1000 })
 */
export class TimeLimitExceeded extends IddqueueError {}

/**
 * The reason a handler's `signal` aborts when its worker stops gracefully.
 *
 * @example
 * broker.actor('long', async (ctx: ActorContext) => {
 *   if (ctx.signal.aborted && WorkerShutdown.isInstance(ctx.signal.reason)) return 'stopped early'
 * })
 */
export class WorkerShutdown extends IddqueueError {}

/**
 * The reason a handler's `signal` aborts when its message is cancelled while
 * running. A cooperative handler may return normally.
 *
 * @example
 * broker.actor('export', async (ctx: ActorContext) => {
 *   for (const chunk of chunks) {
 *     if (ctx.signal.aborted) return { stopped: true }
 *     await write(chunk)
 *   }
 * })
 */
export class MessageCancelled extends IddqueueError {}

/**
 * Why an expired message was rejected without running (`maxAgeMs`).
 *
 * @example
 * broker.on('message:rejected', ({ error }) => {
 *   if (AgeLimitExceeded.isInstance(error)) console.warn('too old')
 * })
 */
export class AgeLimitExceeded extends IddqueueError {}

/**
 * An operation that is valid in itself but not in the object's current
 * state: a worker started twice, an actor declared twice on one broker, a
 * plugin instance set up by a second broker.
 *
 * @example
 * await worker.start()
 * await worker.start() // InvalidStateError: Worker … was already started
 */
export class InvalidStateError extends IddqueueError {}

/**
 * @internal The same iddqueue error with `prefix` before its message and the
 * original as its cause, so a caller can catch it by class while the text
 * says where it happened. A copy, not a rebuild through the constructor:
 * constructors differ (`Retry` takes options, plugin errors their own
 * arguments), so the copy keeps the prototype and every own field
 * (`delayMs`, `option`, ...). Other errors pass through unchanged.
 */
export function withContext(error: unknown, prefix: string): unknown {
  if (!IddqueueError.isInstance(error)) return error
  const copy = Object.create(Object.getPrototypeOf(error)) as Error
  Object.defineProperties(copy, Object.getOwnPropertyDescriptors(error))
  const message = `${prefix}: ${error.message}`
  const hidden = { writable: true, configurable: true, enumerable: false }
  Object.defineProperty(copy, 'message', { ...hidden, value: message })
  Object.defineProperty(copy, 'cause', { ...hidden, value: error })
  if (typeof error.stack === 'string') {
    const head = `${error.name}: ${error.message}`
    const stack = error.stack.startsWith(head)
      ? `${error.name}: ${message}${error.stack.slice(head.length)}`
      : error.stack
    Object.defineProperty(copy, 'stack', { ...hidden, value: stack })
  }
  return copy
}
