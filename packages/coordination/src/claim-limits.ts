import {
  type ActorDefinition,
  assertQueueName,
  type ClaimClauses,
  InvalidOptionError,
  type Message,
  type MessageBuild,
  type SettleClauses,
} from '@iddqueue/core'
import type { Namespace } from '@iddqueue/schema'
import { checkDuration, checkInteger, checkKey } from './check.js'
import type { CoordinationSetup } from './coordination-setup.js'
import {
  driftSql,
  eligibleSql,
  lockSlotsSql,
  pickSql,
  rebuildSlotsSql,
  releaseClauses,
  saturatedSql,
  wakeAtSql,
} from './sql/claim-limits-sql.js'

/**
 * Candidates a limited claim locks per row it may claim. One (decision
 * 0016): the pre-filter already steps over the limits saturated at the
 * snapshot, and every extra candidate is a row lock written and ranked for
 * nothing; twice the batch drained 1,000 keys no faster.
 */
const OVERFETCH = 1

/** The most places a rate limit may give per period (its window stores one start time per place). */
export const MAX_RATE_LIMIT = 10_000

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
 * The actor option `rate` of the coordination plugin: at most `limit`
 * messages of the actor started within any `periodMs`, across every
 * worker, or, with `key`, at most that per key. `sendWithOptions({
 * options: { rateKey } })` gives a message's key directly.
 *
 * @example
 * broker.actor('callApi', callApi, {
 *   rate: { key: (customerId: string) => `customer:${customerId}`, limit: 10, periodMs: 1_000 },
 * })
 */
export interface RateOption {
  /** Starts per period, from 1 to 10,000. */
  readonly limit: number
  readonly periodMs: number
  // biome-ignore lint/suspicious/noExplicitAny: the actor's arguments, whatever they are
  readonly key?: ((...args: any[]) => string) | undefined
}

/**
 * The actor options the coordination plugin owns.
 *
 * @example
 * const options: CoordinationActorOptions = {
 *   concurrency: { limit: 4 },
 *   rate: { limit: 100, periodMs: 1_000 },
 * }
 */
export interface CoordinationActorOptions {
  readonly concurrency?: ConcurrencyOption | undefined
  readonly rate?: RateOption | undefined
}

/**
 * A limit declared on the plugin, `coordination({ limits })`: a
 * concurrency and/or a rate for every message of a queue, or of an actor
 * (beside the actor's own options; an actor may not declare the same kind
 * in both places).
 *
 * @example
 * const limits: DeclaredLimit[] = [
 *   { queue: 'emails', rate: { limit: 50, periodMs: 1_000 } },
 *   { actor: 'report', concurrency: 2 },
 * ]
 */
export type DeclaredLimit = (
  | { readonly queue: string; readonly actor?: undefined }
  | { readonly actor: string; readonly queue?: undefined }
) & {
  readonly concurrency?: number | undefined
  readonly rate?: { readonly limit: number; readonly periodMs: number } | undefined
}

/** @internal One limit a message counts against, as stored in `options.limits`. */
export interface MessageLimit {
  /** `<kind><scope>:<name>`: kind `c` or `r`, scope `k`, `a` or `q`. */
  readonly id: string
  readonly limit: number
  readonly periodMs?: number
}

/** @internal Plugin-declared limits by target, checked. */
export interface DeclaredLimits {
  readonly queues: ReadonlyMap<string, DeclaredValues>
  readonly actors: ReadonlyMap<string, DeclaredValues>
}

/** @internal */
export interface DeclaredValues {
  readonly concurrency?: number
  readonly rate?: { readonly limit: number; readonly periodMs: number }
}

/** @internal The limits a message counts against (none when it has no `limits`). */
export function limitsOf(message: Message): readonly MessageLimit[] {
  const limits = message.options.limits
  return Array.isArray(limits) ? (limits as MessageLimit[]) : []
}

/** @internal `scope` and `name` of a stored limit id. */
export function splitLimitId(id: string): { kind: 'c' | 'r'; scope: string; name: string } {
  const scope = id[1] === 'k' ? 'key' : id[1] === 'a' ? 'actor' : 'queue'
  return { kind: id[0] === 'c' ? 'c' : 'r', scope, name: id.slice(3) }
}

function optionOf<T>(
  actor: ActorDefinition | undefined,
  name: 'concurrency' | 'rate',
): T | undefined {
  return actor?.options[name] as T | undefined
}

function checkRateValues(what: string, name: string, value: unknown) {
  if (typeof value !== 'object' || value === null)
    throw new InvalidOptionError(
      `Invalid option ${name} for ${what}: expected { limit, periodMs }, got ${String(value)}`,
    )
  const { limit, periodMs } = value as Record<string, unknown>
  return {
    limit: checkInteger(what, `${name}.limit`, limit, { max: MAX_RATE_LIMIT }),
    periodMs: checkDuration(what, `${name}.periodMs`, periodMs),
  }
}

function refuseUnknown(what: string, name: string, rest: object, expected: string): void {
  const unknown = Object.keys(rest)
  if (unknown.length > 0)
    throw new InvalidOptionError(
      `Invalid option ${name} for ${what}: unknown key ${unknown.join(', ')} (expected ${expected})`,
    )
}

/** @internal `checkActor`: refuses malformed `concurrency` and `rate` options at declaration. */
export function checkLimitOptions(actor: ActorDefinition, declared?: DeclaredLimits): void {
  const what = `actor ${actor.name}`
  const concurrency = actor.options.concurrency
  if (concurrency !== undefined) {
    if (typeof concurrency !== 'object' || concurrency === null)
      throw new InvalidOptionError(
        `Invalid option concurrency for ${what}: expected { limit, key? }, got ${String(concurrency)}`,
      )
    const { limit, key, ...rest } = concurrency as unknown as Record<string, unknown>
    checkInteger(what, 'concurrency.limit', limit)
    checkKeyFunction(what, 'concurrency', key)
    refuseUnknown(what, 'concurrency', rest, 'limit, key')
  }
  const rate = actor.options.rate
  if (rate !== undefined) {
    checkRateValues(what, 'rate', rate)
    const { limit: _l, periodMs: _p, key, ...rest } = rate as unknown as Record<string, unknown>
    checkKeyFunction(what, 'rate', key)
    refuseUnknown(what, 'rate', rest, 'limit, periodMs, key')
  }
  const onPlugin = declared?.actors.get(actor.name)
  if (onPlugin?.concurrency !== undefined && concurrency !== undefined)
    throw new InvalidOptionError(
      `Invalid option concurrency for ${what}: coordination({ limits }) already declares its concurrency`,
    )
  if (onPlugin?.rate !== undefined && rate !== undefined)
    throw new InvalidOptionError(
      `Invalid option rate for ${what}: coordination({ limits }) already declares its rate`,
    )
}

function checkKeyFunction(what: string, name: string, key: unknown): void {
  if (key !== undefined && typeof key !== 'function')
    throw new InvalidOptionError(
      `Invalid option ${name}.key for ${what}: expected a function returning a string, got ${typeof key}`,
    )
}

/** @internal `coordination({ limits })`, checked before any SQL. */
export function checkDeclaredLimits(limits: unknown): DeclaredLimits {
  const queues = new Map<string, DeclaredValues>()
  const actors = new Map<string, DeclaredValues>()
  if (limits === undefined) return { queues, actors }
  if (!Array.isArray(limits))
    throw new InvalidOptionError(
      `Invalid coordination limits: expected an array, got ${typeof limits}`,
    )
  for (const entry of limits as unknown[]) {
    if (typeof entry !== 'object' || entry === null)
      throw new InvalidOptionError(
        `Invalid coordination limit ${String(entry)}: expected { queue | actor, concurrency?, rate? }`,
      )
    const { queue, actor, concurrency, rate, ...rest } = entry as Record<string, unknown>
    if ((queue === undefined) === (actor === undefined))
      throw new InvalidOptionError(
        'Invalid coordination limit: expected exactly one of queue, actor',
      )
    const scope = queue !== undefined ? 'queue' : 'actor'
    const name = queue !== undefined ? queue : actor
    if (scope === 'queue') assertQueueName(name as string)
    else checkKey('limit actor', name)
    const what = `the ${scope} limit ${String(name)}`
    refuseUnknown(what, 'limits', rest, 'queue or actor, concurrency, rate')
    if (concurrency === undefined && rate === undefined)
      throw new InvalidOptionError(
        `Invalid coordination limit for ${what}: expected concurrency or rate`,
      )
    const values: DeclaredValues = {
      ...(concurrency !== undefined
        ? { concurrency: checkInteger(what, 'concurrency', concurrency) }
        : {}),
      ...(rate !== undefined ? { rate: checkRateValues(what, 'rate', rate) } : {}),
    }
    const into = scope === 'queue' ? queues : actors
    if (into.has(name as string))
      throw new InvalidOptionError(`Invalid coordination limits: ${what} is declared twice`)
    into.set(name as string, values)
  }
  return { queues, actors }
}

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
      `The ${kind} key function of ${what} threw: ${error instanceof Error ? error.message : String(error)}`,
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
 * @internal The most limits a message of these actors and queues carries
 * (0: none may carry one, so the claim needs no clause).
 */
export function limitPlaces(
  queues: readonly string[],
  actors: readonly ActorDefinition[],
  declared: DeclaredLimits,
): number {
  const onQueue = (queue: string) => {
    const values = declared.queues.get(queue)
    return (values?.concurrency !== undefined ? 1 : 0) + (values?.rate !== undefined ? 1 : 0)
  }
  let most = Math.max(0, ...queues.map(onQueue))
  for (const actor of actors) {
    const onActor = declared.actors.get(actor.name)
    const concurrency =
      actor.options.concurrency !== undefined || onActor?.concurrency !== undefined
    const rate = actor.options.rate !== undefined || onActor?.rate !== undefined
    most = Math.max(most, (concurrency ? 1 : 0) + (rate ? 1 : 0) + onQueue(actor.queue))
  }
  return most
}

/** @internal `claimClauses`: the limited claim when a message of the worker's queues may carry a limit. */
export function limitClauses(
  setup: CoordinationSetup | undefined,
  queues: readonly string[],
  actors: readonly ActorDefinition[],
  declared: DeclaredLimits,
): ClaimClauses | undefined {
  const places = limitPlaces(queues, actors, declared)
  if (!setup || places === 0) return undefined
  return {
    with: saturatedSql(setup.ns),
    eligible: eligibleSql(places),
    wakeAt: wakeAtSql(setup.ns),
    pick: { overfetch: OVERFETCH, ...pickSql(setup.ns, OVERFETCH) },
  }
}

/**
 * @internal `settleClauses`: the settle of a message with a concurrency
 * limit frees its places in the same statement (decision 0016).
 */
export function releaseSettleClauses(ns: Namespace): SettleClauses {
  return {
    concerns: (message) => limitsOf(message).some((limit) => limit.id[0] === 'c'),
    ...releaseClauses(ns),
  }
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
