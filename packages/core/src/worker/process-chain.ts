import type { ActorContext } from '../actor/actor-context.js'
import type { ActorDefinition } from '../actor/actor-definition.js'
import { handlerParameters } from '../actor/handler-parameters.js'
import type { Middleware, Outcome, ProcessEvent } from '../plugin/middleware-interface.js'
import type { Run } from './run.js'

/** @internal Runs one message through an actor's middleware to its handler. */
export type ProcessChain = (event: ProcessEvent) => Promise<Outcome>

/**
 * The handler's arguments. The context goes in the handler's last declared
 * parameter (counted from its source, so parameters with default values
 * count) when it declares more parameters than the message has arguments,
 * so trailing `undefined` arguments, dropped by JSON, and omitted optional
 * ones leave it in place. A handler whose last parameter is a rest
 * parameter (`(...items) => ...`) or has a default value (`(n, by = 1)`:
 * a context never has one) never gets it: it receives exactly the arguments.
 * `ActorArgs` types the same rule. A handler with optional parameters and
 * no context would get the context in an omitted optional argument: nothing
 * here can tell such a parameter from a context (types are erased), so
 * `broker.actor()` refuses that shape at compile time (`ContextRule`).
 */
function argumentsFor(event: ProcessEvent): unknown[] {
  const args = event.message.args
  const { count: declared, rest, lastHasDefault } = handlerParameters(event.actor.handler)
  if (rest || lastHasDefault || declared <= args.length) return args as unknown[]
  const call: unknown[] = [...args]
  call.length = declared - 1
  call.push({
    message: event.message,
    attempt: event.attempt,
    retries: event.retries,
    get signal() {
      return event.signal
    },
    progress: (value: unknown) =>
      (event as Partial<Run>).reportProgress?.(value) ?? Promise.resolve(),
    // A transactional actor's transaction (see transactional-run.ts); undefined otherwise.
    transaction: (event as Partial<Run>).transaction,
  } satisfies ActorContext & { transaction: unknown })
  return call
}

function invoke(event: ProcessEvent): Promise<Outcome> {
  let handler: Promise<unknown>
  try {
    handler = Promise.resolve(
      (event.actor.handler as (...args: unknown[]) => unknown)(...argumentsFor(event)),
    )
  } catch (error) {
    return Promise.resolve({ kind: 'failure', error })
  }
  // One promise settles the attempt: the handler's result, or expire() first.
  const run = event as Run
  run.handler = handler
  return new Promise<Outcome>((resolve) => {
    run.expire = (error) => resolve({ kind: 'failure', error })
    handler.then(
      (result) => resolve({ kind: 'success', result }),
      (error: unknown) => resolve({ kind: 'failure', error }),
    )
  })
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
