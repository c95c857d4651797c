import { TimeLimitExceeded } from '../errors.js'
import type { Middleware, Outcome } from '../plugin/middleware.js'

/**
 * @internal Aborts the handler's signal once its actor's `timeLimitMs` has
 * passed, and fails the attempt then (it follows the retry policy). Node
 * cannot interrupt a handler that ignores its signal; the worker keeps its
 * slot busy until such a handler returns.
 */
export function timeLimit(): Middleware {
  return {
    async process(event, next) {
      const limit = event.actor.options.timeLimitMs
      let timer: NodeJS.Timeout | undefined
      const expired = new Promise<Outcome>((resolve) => {
        timer = setTimeout(() => {
          const error = new TimeLimitExceeded(
            `Actor ${event.actor.name} passed its time limit of ${limit} ms on message ${event.message.id}`,
          )
          event.abort(error)
          resolve({ kind: 'failure', error })
        }, limit)
      })
      try {
        return await Promise.race([next(), expired])
      } finally {
        clearTimeout(timer)
      }
    },
  }
}
