import type { ActorContext } from '../actor/actor-context.js'
import type { ActorDefinition } from '../actor/actor-definition.js'
import type { Middleware, Outcome, ProcessEvent } from '../plugin/middleware.js'

/** @internal Runs one message through an actor's middleware to its handler. */
export type ProcessChain = (event: ProcessEvent) => Promise<Outcome>

/** @internal Where the handler's promise goes, so the worker keeps its slot until the handler really ends. */
export const handlerSettled = new WeakMap<ProcessEvent, Promise<unknown>>()

async function invoke(event: ProcessEvent): Promise<Outcome> {
  const context: ActorContext = {
    message: event.message,
    attempt: event.attempt,
    retries: event.retries,
    get signal() {
      return event.signal
    },
  }
  let running: Promise<unknown>
  try {
    running = Promise.resolve(
      (event.actor.handler as (...args: unknown[]) => unknown)(...event.message.args, context),
    )
  } catch (error) {
    return { kind: 'failure', error }
  }
  handlerSettled.set(event, running)
  try {
    return { kind: 'success', result: await running }
  } catch (error) {
    return { kind: 'failure', error }
  }
}

/**
 * @internal The chain for one actor: every middleware's `process` hook that
 * applies to it (see `forActor`), outermost first, around the handler.
 */
export function processChain(
  middleware: readonly Middleware[],
  actor: ActorDefinition,
): ProcessChain {
  const hooks = middleware.filter((m) => m.process && (m.forActor?.(actor) ?? true))
  return hooks.reduceRight<ProcessChain>(
    (next, m) => (event) => m.process!(event, () => next(event)),
    invoke,
  )
}
