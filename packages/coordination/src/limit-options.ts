import {
  type ActorDefinition,
  assertQueueName,
  InvalidOptionError,
  type Message,
} from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import { checkDuration, checkInteger, checkKey } from './check.js'

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

/** @internal An actor's `concurrency` or `rate` option. */
export function optionOf<T>(
  actor: ActorDefinition | undefined,
  name: 'concurrency' | 'rate',
): T | undefined {
  return actor?.options[name] as T | undefined
}

function checkRateValues(what: string, name: string, value: unknown) {
  if (typeof value !== 'object' || value === null)
    throw new InvalidOptionError(
      `Invalid option ${name} for ${what}: expected { limit, periodMs }, got ${describeValue(value)}`,
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
        `Invalid option concurrency for ${what}: expected { limit, key? }, got ${describeValue(concurrency)}`,
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
        `Invalid coordination limit ${describeValue(entry)}: expected { queue | actor, concurrency?, rate? }`,
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

/** @internal The limits an actor's own options declare for the whole actor (no key function). */
export function keylessLimits(actor: ActorDefinition): DeclaredValues {
  const concurrency = optionOf<ConcurrencyOption>(actor, 'concurrency')
  const rate = optionOf<RateOption>(actor, 'rate')
  return {
    ...(concurrency && !concurrency.key ? { concurrency: concurrency.limit } : {}),
    ...(rate && !rate.key ? { rate: { limit: rate.limit, periodMs: rate.periodMs } } : {}),
  }
}

/**
 * @internal The actor and queue limits a process declares, on the plugin
 * and on its actors, one entry per (scope, name), for `listLimits()`.
 */
export function declaredList(
  declared: DeclaredLimits,
  actorLimits: ReadonlyMap<string, DeclaredValues>,
): (readonly ['actor' | 'queue', string, DeclaredValues])[] {
  const actors = new Map(declared.actors)
  for (const [name, values] of actorLimits)
    if (values.concurrency !== undefined || values.rate !== undefined)
      actors.set(name, { ...actors.get(name), ...values })
  return [
    ...[...actors].map(([name, values]) => ['actor', name, values] as const),
    ...[...declared.queues].map(([name, values]) => ['queue', name, values] as const),
  ]
}
