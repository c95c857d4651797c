import { AgeLimitExceeded } from '../errors.js'
import type { Middleware } from '../plugin/middleware-interface.js'

/**
 * @internal Rejects, without running it, a message older than its actor's
 * `maxAgeMs`, measured from its first enqueue (retries included) with
 * PostgreSQL's clock.
 */
export function ageLimit(): Middleware {
  return {
    forActor: (actor) => actor.options.maxAgeMs !== undefined,
    async process(event, next) {
      const maxAgeMs = event.actor.options.maxAgeMs!
      if (event.ageMs <= maxAgeMs) return next()
      const error = new AgeLimitExceeded(
        `Message ${event.message.id} is ${Math.round(event.ageMs)} ms old, over maxAgeMs ${maxAgeMs} of actor ${event.actor.name}; skipped`,
      )
      return { kind: 'failure', error, final: true }
    },
  }
}
