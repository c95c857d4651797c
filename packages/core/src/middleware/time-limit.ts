import { TimeLimitExceeded } from '../errors.js'
import type { Middleware } from '../plugin/middleware-interface.js'
import { expire } from '../worker/process-chain.js'
import { Deadlines } from './deadlines.js'

/**
 * @internal Once an actor's `timeLimitMs` has passed, aborts the handler's
 * signal and fails the attempt (it follows the retry policy). Node cannot
 * interrupt a handler that ignores its signal; the worker keeps its slot
 * busy until such a handler returns.
 */
export function timeLimit(): Middleware {
  const deadlines = new Deadlines((event) => {
    expire(
      event,
      new TimeLimitExceeded(
        `Actor ${event.actor.name} passed its time limit of ${event.actor.options.timeLimitMs} ms on message ${event.message.id}`,
      ),
    )
  })
  return {
    process(event, next) {
      return deadlines.watch(event, event.actor.options.timeLimitMs, next)
    },
  }
}
