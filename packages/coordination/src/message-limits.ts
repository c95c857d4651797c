import { type ActorDefinition, InvalidOptionError, type MessageBuild } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import { checkKey } from './check.js'
import {
  type ConcurrencyOption,
  type DeclaredLimits,
  type MessageLimit,
  optionOf,
  type RateOption,
} from './limit-options.js'

/** A key from the message's option or the key function, checked. */
function keyFor(
  build: MessageBuild,
  kind: 'concurrency' | 'rate',
  given: unknown,
  fn: ((...args: unknown[]) => unknown) | undefined,
): string | undefined {
  const what = `actor ${build.actorName}`
  if (given !== undefined) return checkKey(kind, given)
  if (fn === undefined) return undefined
  let key: unknown
  try {
    key = fn(...build.args)
  } catch (error) {
    throw new InvalidOptionError(
      `The ${kind} key function of ${what} threw: ${error instanceof Error ? error.message : describeValue(error)}`,
      { cause: error },
    )
  }
  return checkKey(`${kind} (from ${what})`, key)
}

/**
 * @internal `messageOptions`: the limits of a message being built, from its
 * actor's `concurrency` and `rate` options, its `concurrencyKey` and
 * `rateKey`, and the limits declared on the plugin for its actor and queue;
 * refuses a bad key before anything is sent. The most specific comes first
 * (its fairness group in the claim).
 */
export function limitOptions(
  build: MessageBuild,
  declared: DeclaredLimits,
): { limits: MessageLimit[] } | undefined {
  const what = `actor ${build.actorName}`
  const concurrency = optionOf<ConcurrencyOption>(build.actor, 'concurrency')
  const rate = optionOf<RateOption>(build.actor, 'rate')
  const onActor = declared.actors.get(build.actorName)
  const onQueue = declared.queues.get(build.queue)
  for (const [name, option] of [
    ['concurrencyKey', concurrency],
    ['rateKey', rate],
  ] as const) {
    if (build.options[name] !== undefined && option === undefined)
      throw new InvalidOptionError(
        `Invalid ${name} for ${what}: the actor has no ${name === 'rateKey' ? 'rate' : 'concurrency'} option (declare it in this process)`,
      )
  }
  const limits: MessageLimit[] = []
  const keyed: MessageLimit[] = []
  if (concurrency !== undefined) {
    const key = keyFor(build, 'concurrency', build.options.concurrencyKey, concurrency.key)
    const limit = {
      id: key === undefined ? `ca:${build.actorName}` : `ck:${key}`,
      limit: concurrency.limit,
    }
    ;(key === undefined ? limits : keyed).push(limit)
  } else if (onActor?.concurrency !== undefined) {
    limits.push({ id: `ca:${build.actorName}`, limit: onActor.concurrency })
  }
  if (rate !== undefined) {
    const key = keyFor(build, 'rate', build.options.rateKey, rate.key)
    const limit = {
      id: key === undefined ? `ra:${build.actorName}` : `rk:${key}`,
      limit: rate.limit,
      periodMs: rate.periodMs,
    }
    ;(key === undefined ? limits : keyed).push(limit)
  } else if (onActor?.rate !== undefined) {
    limits.push({ id: `ra:${build.actorName}`, ...onActor.rate })
  }
  if (onQueue?.concurrency !== undefined)
    limits.push({ id: `cq:${build.queue}`, limit: onQueue.concurrency })
  if (onQueue?.rate !== undefined) limits.push({ id: `rq:${build.queue}`, ...onQueue.rate })
  const all = [...keyed, ...limits]
  return all.length > 0 ? { limits: all } : undefined
}

/**
 * @internal The shape of the limits a message of these actors and queues
 * carries: `places`, the most limits one carries (0: none may carry one, so
 * the claim needs no clause), and `rated`, whether one may carry a rate.
 */
export function limitShape(
  queues: readonly string[],
  actors: readonly ActorDefinition[],
  declared: DeclaredLimits,
): { places: number; rated: boolean } {
  const onQueue = (queue: string) => {
    const values = declared.queues.get(queue)
    return (values?.concurrency !== undefined ? 1 : 0) + (values?.rate !== undefined ? 1 : 0)
  }
  let places = Math.max(0, ...queues.map(onQueue))
  let rated = queues.some((queue) => declared.queues.get(queue)?.rate !== undefined)
  for (const actor of actors) {
    const onActor = declared.actors.get(actor.name)
    const concurrency =
      actor.options.concurrency !== undefined || onActor?.concurrency !== undefined
    const rate = actor.options.rate !== undefined || onActor?.rate !== undefined
    rated ||= rate
    places = Math.max(places, (concurrency ? 1 : 0) + (rate ? 1 : 0) + onQueue(actor.queue))
  }
  return { places, rated }
}
