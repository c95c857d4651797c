import { TimeLimitExceeded } from '../errors.js'
import type { Middleware } from '../plugin/middleware.js'
import { expire } from '../worker/process-chain.js'

/**
 * @internal Once an actor's `timeLimitMs` has passed, aborts the handler's
 * signal and fails the attempt (it follows the retry policy). Node cannot
 * interrupt a handler that ignores its signal; the worker keeps its slot
 * busy until such a handler returns.
 */
export function timeLimit(): Middleware {
  return {
    process(event, next) {
      const limit = event.actor.options.timeLimitMs
      const timer = setTimeout(() => {
        expire(
          event,
          new TimeLimitExceeded(
            `Actor ${event.actor.name} passed its time limit of ${limit} ms on message ${event.message.id}`,
          ),
        )
      }, limit)
      return next().finally(() => clearTimeout(timer))
    },
  }
}
