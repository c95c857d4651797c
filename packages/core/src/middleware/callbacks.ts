import { withContext } from '../errors.js'
import type { Middleware } from '../plugin/middleware-interface.js'
import { describeError } from '../worker/failure-record.js'

/**
 * @internal Sends `(message, result)` to the actor's `onSuccess` after a
 * success, and `(message, { type, message })` to `onFailure` after every
 * failed attempt, retried or not, in the same transaction as the outcome.
 * The failure is described as the stored failure record is (sanitised type
 * and text), so an error text jsonb would refuse cannot fail the attempt.
 * A result that cannot be sent (not JSON, too large) rejects the message,
 * with an error that says so.
 */
export function callbacks(): Middleware {
  return {
    forActor: (actor) =>
      actor.options.onSuccess !== undefined || actor.options.onFailure !== undefined,
    async process(event, next) {
      const outcome = await next()
      const { onSuccess, onFailure } = event.actor.options
      if (outcome.kind === 'success' && onSuccess) {
        const callback = event.messageFor(onSuccess, [event.message.toJSON(), outcome.result])
        try {
          event.enqueueAfter(callback)
        } catch (error) {
          // The codec names the path in the callback's arguments (args[1]);
          // say that it is the handler's result.
          throw withContext(
            error,
            `The result of actor ${event.actor.name} cannot be sent to its onSuccess actor ${callback.actor} (as args[1])`,
          )
        }
      } else if (outcome.kind === 'failure' && onFailure) {
        event.enqueueAfter(
          event.messageFor(onFailure, [event.message.toJSON(), describeError(outcome.error)]),
        )
      }
      return outcome
    },
  }
}
