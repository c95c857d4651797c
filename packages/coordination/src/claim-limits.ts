import {
  type ActorDefinition,
  type ClaimClauses,
  InvalidOptionError,
  type Message,
  type MessageBuild,
  type SettledMessage,
} from '@iddqueue/core'
import type { Executor } from '@iddqueue/schema'
import { checkInteger, checkKey } from './check.js'
import type { CoordinationSetup } from './coordination-setup.js'
import {
  driftSql,
  eligibleSql,
  lockSlotsSql,
  pickSql,
  rebuildSlotsSql,
  releaseSlotsSql,
  saturatedSql,
} from './sql/claim-limits-sql.js'

/** Candidates a limited claim locks per row it may claim: room to step over saturated keys. */
const OVERFETCH = 2

/**
 * The actor option `concurrency` of the coordination plugin: at most
 * `limit` messages of the actor running at once across every worker, or,
 * with `key`, at most `limit` per key (computed from the arguments when
 * the message is built, stored on it). `sendWithOptions({ options: {
 * concurrencyKey } })` gives a message's key directly.
 *
 * @example
 * broker.actor('sync', syncCustomer, {
 *   concurrency: { key: (customerId: string) => `customer:${customerId}`, limit: 2 },
 * })
 */
export interface ConcurrencyOption {
  readonly limit: number
  // biome-ignore lint/suspicious/noExplicitAny: the actor's arguments, whatever they are
  readonly key?: ((...args: any[]) => string) | undefined
}

/**
 * The actor options the coordination plugin owns.
 *
 * @example
 * const options: CoordinationActorOptions = { concurrency: { limit: 4 } }
 */
export interface CoordinationActorOptions {
  readonly concurrency?: ConcurrencyOption | undefined
}

/** @internal A message's slot, as stored in its options under `concurrency`. */
export interface Slot {
  readonly scope: 'actor' | 'key'
  readonly name: string
  readonly limit: number
}

/** @internal The slot a message holds while it runs, if any. */
export function slotOf(message: Message): Slot | undefined {
  const slot = message.options.concurrency
  if (typeof slot !== 'object' || slot === null) return undefined
  const { scope, name } = slot as Partial<Slot>
  return (scope === 'actor' || scope === 'key') && typeof name === 'string'
    ? (slot as Slot)
    : undefined
}

function concurrencyOf(actor: ActorDefinition | undefined): ConcurrencyOption | undefined {
  return actor?.options.concurrency as ConcurrencyOption | undefined
}

/** @internal `checkActor`: refuses a malformed `concurrency` option at declaration. */
export function checkConcurrencyOption(actor: ActorDefinition): void {
  const value = actor.options.concurrency
  if (value === undefined) return
  const what = `actor ${actor.name}`
  if (typeof value !== 'object' || value === null)
    throw new InvalidOptionError(
      `Invalid option concurrency for ${what}: expected { limit, key? }, got ${String(value)}`,
    )
  const { limit, key, ...rest } = value as unknown as Record<string, unknown>
  checkInteger(what, 'concurrency.limit', limit)
  if (key !== undefined && typeof key !== 'function')
    throw new InvalidOptionError(
      `Invalid option concurrency.key for ${what}: expected a function returning a string, got ${typeof key}`,
    )
  const unknown = Object.keys(rest)
  if (unknown.length > 0)
    throw new InvalidOptionError(
      `Invalid option concurrency for ${what}: unknown key ${unknown.join(', ')} (expected limit, key)`,
    )
}

/**
 * @internal `messageOptions`: the slot of a message being built, from its
 * actor's `concurrency` option and its `concurrencyKey`; refuses a bad key
 * before anything is sent.
 */
export function slotOptions(build: MessageBuild): { concurrency: Slot } | undefined {
  const given = build.options.concurrencyKey
  const option = concurrencyOf(build.actor)
  const what = `actor ${build.actorName}`
  if (option === undefined) {
    if (given !== undefined)
      throw new InvalidOptionError(
        `Invalid concurrencyKey for ${what}: the actor has no concurrency option (declare { concurrency: { limit } } in this process)`,
      )
    return undefined
  }
  if (given !== undefined)
    return {
      concurrency: { scope: 'key', name: checkKey('concurrency', given), limit: option.limit },
    }
  if (option.key === undefined)
    return { concurrency: { scope: 'actor', name: build.actorName, limit: option.limit } }
  let key: unknown
  try {
    key = option.key(...build.args)
  } catch (error) {
    throw new InvalidOptionError(
      `The concurrency key function of ${what} threw: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    )
  }
  return {
    concurrency: {
      scope: 'key',
      name: checkKey(`concurrency (from ${what})`, key),
      limit: option.limit,
    },
  }
}

/** @internal `claimClauses`: the limited claim when an actor of the worker's queues has a limit. */
export function limitClauses(
  setup: CoordinationSetup | undefined,
  actors: readonly ActorDefinition[],
): ClaimClauses | undefined {
  if (!setup || !actors.some((actor) => concurrencyOf(actor) !== undefined)) return undefined
  return {
    with: saturatedSql(setup.ns),
    eligible: eligibleSql,
    pick: { overfetch: OVERFETCH, ...pickSql(setup.ns, OVERFETCH) },
  }
}

/**
 * @internal In the settle transaction: frees the slots of the settled
 * messages and wakes the workers of their queues (a worker whose claim came
 * back empty because of limits sleeps until a slot frees).
 */
export async function releaseSlots(
  setup: CoordinationSetup,
  settled: readonly SettledMessage[],
  executor: Executor,
): Promise<void> {
  const scopes: string[] = []
  const names: string[] = []
  const queues = new Set<string>()
  for (const { message } of settled) {
    const slot = slotOf(message)
    if (!slot) continue
    scopes.push(slot.scope)
    names.push(slot.name)
    queues.add(message.queue)
  }
  if (scopes.length === 0) return
  await executor.query(releaseSlotsSql(setup.ns), [
    scopes,
    names,
    setup.ns.channel('wake'),
    [...queues],
  ])
}

/**
 * @internal Rebuilds the counters that disagree with the `consumed` rows:
 * after crash recovery requeued a dead worker's messages, or rows were
 * handed back outside a settle. Under row locks taken in slot order, then a
 * fresh count, so it never frees a slot a claim holds.
 */
export async function reconcileSlots(setup: CoordinationSetup): Promise<number> {
  const drift = await setup.executor.query<{ scope: string; name: string }>(driftSql(setup.ns))
  if (drift.length === 0) return 0
  const params = [drift.map((d) => d.scope), drift.map((d) => d.name)]
  await setup.executor.transaction(async (tx) => {
    await tx.query(lockSlotsSql(setup.ns), params)
    await tx.query(rebuildSlotsSql(setup.ns), params)
  })
  return drift.length
}
