import type { ActorContext } from '../actor/actor-context.js'
import type { ActorDefinition } from '../actor/actor-definition.js'
import type { Middleware, Outcome, ProcessEvent } from '../plugin/middleware-interface.js'
import type { Run } from './run.js'

/** @internal Runs one message through an actor's middleware to its handler. */
export type ProcessChain = (event: ProcessEvent) => Promise<Outcome>

/**
 * @internal Fails the attempt of `event` at once with `error`, and aborts its
 * signal. Does nothing once the handler has finished.
 */
export function expire(event: ProcessEvent, error: unknown): void {
  event.abort(error)
  ;(event as Run).expire?.(error)
}

/**
 * The handler's arguments. The context goes in the handler's last declared
 * parameter when it declares more parameters than the message has arguments
 * (so trailing `undefined` arguments, dropped by JSON, and omitted optional
 * ones leave it in place); otherwise it is not passed at all, so rest
 * parameters (`(...items) => ...`) receive exactly the message's arguments.
 */
function argumentsFor(event: ProcessEvent): unknown[] {
  const args = event.message.args
  const declared = event.actor.handler.length
  if (declared <= args.length) return args as unknown[]
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
  } satisfies ActorContext)
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
