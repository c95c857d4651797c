import { IddqueueError } from '@iddqueue/core'

/**
 * What a stored failure says: the error's class name and text (at most
 * 2,000 characters), when it happened and on which attempt. Never the
 * stack or the arguments.
 *
 * @example
 * const record: StoredFailure = { type: 'TypeError', message: 'amount is not a number', at: '2025-01-01T00:00:00.000Z', attempt: 3 }
 */
export interface StoredFailure {
  /** The error's class name, such as `TypeError`; `MessageCancelled` for a cancellation. */
  readonly type: string
  /** The error's text, at most 2,000 characters. */
  readonly message: string
  /** When the attempt failed (ISO 8601, the worker's clock). */
  readonly at: string
  /** The attempt that failed, from 1; 0 when the message never started. */
  readonly attempt: number
}

/**
 * No result is stored for the message: it has not finished yet, its result
 * expired (`resultTtlMs`) or was purged, or its actor does not store results.
 * Thrown by `message.result({ block: false })`.
 *
 * @example
 * try {
 *   return await message.result({ block: false })
 * } catch (error) {
 *   if (ResultMissing.isInstance(error)) return 'not yet'
 *   throw error
 * }
 */
export class ResultMissing extends IddqueueError {
  constructor(
    readonly messageId: string,
    message: string,
  ) {
    super(message)
  }
}

/**
 * A blocking `message.result()` waited `timeoutMs` and no result came.
 * The message may still finish later; call `result()` again.
 *
 * @example
 * try {
 *   await message.result({ timeoutMs: 1_000 })
 * } catch (error) {
 *   if (ResultTimeout.isInstance(error)) console.log(`no result after ${error.timeoutMs} ms`)
 * }
 */
export class ResultTimeout extends IddqueueError {
  constructor(
    readonly messageId: string,
    readonly timeoutMs: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * The message failed for good (its retries ran out, or it failed with an
 * error that is never retried, or its age limit passed): `failure` holds
 * what its last attempt failed with. `ResultFailure.isInstance()` is true
 * for a {@link ResultCancelled} too.
 *
 * @example
 * try {
 *   await charge.send(orderId).then((m) => m.result())
 * } catch (error) {
 *   if (ResultFailure.isInstance(error)) console.error(error.failure.type, error.failure.message)
 * }
 */
export class ResultFailure extends IddqueueError {
  constructor(
    readonly messageId: string,
    readonly failure: StoredFailure,
    message = `Message ${messageId} failed: ${failure.type}: ${failure.message}`,
  ) {
    super(message)
  }
}

/**
 * The message was cancelled (`broker.cancel()`), before or while it ran:
 * it has no result and never will. A waiter already blocked when the
 * cancellation commits gets it too. A {@link ResultFailure}.
 *
 * @example
 * await broker.cancel(message.id)
 * await message.result() // throws ResultCancelled
 */
export class ResultCancelled extends ResultFailure {
  constructor(messageId: string, failure: StoredFailure) {
    super(messageId, failure, `Message ${messageId} was cancelled`)
  }
}
