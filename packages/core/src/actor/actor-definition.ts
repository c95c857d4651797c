import type { Handler } from './actor-context.js'
import type { ResolvedActorOptions } from './actor-options.js'

/**
 * A declared actor as workers and middleware see it: name, handler and options.
 *
 * @example
 * const emailsOnly: Middleware = {
 *   forActor: (actor: ActorDefinition) => actor.queue === 'emails',
 *   process: (event, next) => next(),
 * }
 */
export interface ActorDefinition {
  readonly name: string
  readonly queue: string
  readonly handler: Handler
  readonly options: ResolvedActorOptions & Readonly<Record<string, unknown>>
}
