import type { Middleware } from '../plugin/middleware.js'

function describeError(error: unknown): { type: string; message: string } {
  if (error instanceof Error) return { type: error.name, message: error.message.slice(0, 2000) }
  return { type: typeof error, message: String(error).slice(0, 2000) }
}

/**
 * @internal Sends `(message, result)` to the actor's `onSuccess` after a
 * success, and `(message, { type, message })` to `onFailure` after every
 * failed attempt, retried or not, in the same transaction as the outcome.
 */
export function callbacks(): Middleware {
  return {
    forActor: (actor) =>
      actor.options.onSuccess !== undefined || actor.options.onFailure !== undefined,
    async process(event, next) {
      const outcome = await next()
      const { onSuccess, onFailure } = event.actor.options
      if (outcome.kind === 'success' && onSuccess) {
        event.enqueueAfter(event.messageFor(onSuccess, [event.message.toJSON(), outcome.result]))
      } else if (outcome.kind === 'failure' && onFailure) {
        event.enqueueAfter(
          event.messageFor(onFailure, [event.message.toJSON(), describeError(outcome.error)]),
        )
      }
      return outcome
    },
  }
}
