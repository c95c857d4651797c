import { Retry } from '../errors.js'
import type { Middleware, Outcome, ProcessEvent } from '../plugin/middleware-interface.js'
import { computeBackoff } from './backoff.js'

/**
 * @internal The retry policy. A failure is retried (exponential backoff with
 * jitter, or the delay of a thrown `Retry`) unless it is final, its error is
 * one of the actor's `throws`, or the budget is spent (`retryWhen` decides
 * instead of `maxRetries` when given). When the budget is spent,
 * `onRetryExhausted` receives the message and `{ retries, maxRetries }`.
 */
export function retries(): Middleware {
  return {
    process(event, next) {
      return next().then((outcome) => decide(event, outcome))
    },
  }
}

function decide(event: ProcessEvent, outcome: Outcome): Outcome {
  if (outcome.kind !== 'failure' || outcome.final || outcome.retryDelayMs !== undefined)
    return outcome
  const options = event.actor.options
  const error = outcome.error
  if (options.throws.some((errorClass) => error instanceof errorClass))
    return { ...outcome, final: true }
  const retry = options.retryWhen
    ? options.retryWhen(event.retries, error)
    : event.retries < options.maxRetries
  if (!retry) {
    if (options.onRetryExhausted) {
      event.enqueueAfter(
        event.messageFor(options.onRetryExhausted, [
          event.message.toJSON(),
          { retries: event.retries, maxRetries: options.maxRetries },
        ]),
      )
    }
    return { ...outcome, exhausted: true }
  }
  const delayMs =
    Retry.isInstance(error) && (error as Retry).delayMs !== undefined
      ? (error as Retry).delayMs!
      : computeBackoff(event.retries + 1, options)
  return { ...outcome, retryDelayMs: delayMs }
}
