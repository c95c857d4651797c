import { type ActorDefinition, InvalidOptionError } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'

/**
 * Options of {@link results}: defaults for every actor, and how waiting and
 * purging behave.
 *
 * @example
 * const plugin = results({ resultTtlMs: 3_600_000, pollIntervalMs: 250 })
 */
export interface ResultsOptions {
  /** Store the results of actors that do not say (`storeResults`). Default false. */
  readonly storeResults?: boolean | undefined
  /** How long a result stays readable, for actors that do not say (`resultTtlMs`). Default 600,000 ms (10 minutes). */
  readonly resultTtlMs?: number | undefined
  /**
   * How often a blocked `message.result()` reads again when the broker
   * cannot LISTEN (`pollOnly`). Default 500 ms. With LISTEN a waiter is
   * woken by the notification, and reads again every 5 s in case one was
   * lost while the listen connection reconnected.
   */
  readonly pollIntervalMs?: number | undefined
  /**
   * How often each broker with this plugin deletes expired results, at
   * most one process at a time per namespace; `false` never (call
   * `purgeResults()` yourself). Default 3,600,000 ms (hourly).
   */
  readonly purgeIntervalMs?: number | false | undefined
}

/**
 * The actor options this plugin owns. `@iddqueue/results` adds them to
 * core's `ActorOptions`, so `broker.actor(name, handler, { storeResults: true })`
 * type-checks once the package is imported.
 *
 * @example
 * const options: ResultsActorOptions = { storeResults: true, resultTtlMs: 60_000 }
 */
export interface ResultsActorOptions {
  /** Store this actor's results (value, final failure, cancellation). Default: the plugin's `storeResults`, false. */
  storeResults?: boolean | undefined
  /** How long its results stay readable, from when they are stored. Default: the plugin's `resultTtlMs`, 600,000 ms. */
  resultTtlMs?: number | undefined
}

/**
 * Defaults of {@link ResultsOptions}; `resultTtlMs` is Dramatiq's default
 * result TTL.
 *
 * @example
 * console.log(RESULTS_DEFAULTS.resultTtlMs) // 600000
 */
export const RESULTS_DEFAULTS = Object.freeze({
  storeResults: false,
  resultTtlMs: 10 * 60 * 1000,
  pollIntervalMs: 500,
  purgeIntervalMs: 3_600_000,
})

/** @internal */
export interface ResolvedResultsOptions {
  readonly storeResults: boolean
  readonly resultTtlMs: number
  readonly pollIntervalMs: number
  readonly purgeIntervalMs: number | false
}

/** @internal What the plugin does for one actor. */
export interface ActorResultsPolicy {
  readonly store: boolean
  readonly ttlMs: number
}

/** The longest delay a Node timer keeps: past it, `setTimeout` and `setInterval` fire after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647

function positiveInteger(value: unknown, max = Number.MAX_SAFE_INTEGER): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= max
}

/** @internal Checks the plugin's options and fills in defaults. */
export function resolveResultsOptions(options: unknown): ResolvedResultsOptions {
  if (options === undefined) return RESULTS_DEFAULTS
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('Invalid results() options: expected an object')
  }
  const known = ['storeResults', 'resultTtlMs', 'pollIntervalMs', 'purgeIntervalMs']
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new InvalidOptionError(
        `Unknown option ${JSON.stringify(key)} of results(): expected one of ${known.join(', ')}`,
      )
    }
  }
  const o = options as ResultsOptions
  if (o.storeResults !== undefined && typeof o.storeResults !== 'boolean') {
    throw new InvalidOptionError(
      `Invalid storeResults ${describeValue(o.storeResults)} of results(): expected true or false`,
    )
  }
  if (o.resultTtlMs !== undefined && !positiveInteger(o.resultTtlMs)) {
    throw new InvalidOptionError(
      `Invalid resultTtlMs ${describeValue(o.resultTtlMs)} of results(): expected an integer of at least 1`,
    )
  }
  // The intervals arm timers: bounded where Node keeps them.
  if (o.pollIntervalMs !== undefined && !positiveInteger(o.pollIntervalMs, MAX_TIMER_MS)) {
    throw new InvalidOptionError(
      `Invalid pollIntervalMs ${describeValue(o.pollIntervalMs)} of results(): expected an integer from 1 to ${MAX_TIMER_MS}`,
    )
  }
  if (
    o.purgeIntervalMs !== undefined &&
    o.purgeIntervalMs !== false &&
    !positiveInteger(o.purgeIntervalMs, MAX_TIMER_MS)
  ) {
    throw new InvalidOptionError(
      `Invalid purgeIntervalMs ${describeValue(o.purgeIntervalMs)} of results(): expected an integer from 1 to ${MAX_TIMER_MS}, or false`,
    )
  }
  return {
    storeResults: o.storeResults ?? RESULTS_DEFAULTS.storeResults,
    resultTtlMs: o.resultTtlMs ?? RESULTS_DEFAULTS.resultTtlMs,
    pollIntervalMs: o.pollIntervalMs ?? RESULTS_DEFAULTS.pollIntervalMs,
    purgeIntervalMs: o.purgeIntervalMs ?? RESULTS_DEFAULTS.purgeIntervalMs,
  }
}

/**
 * @internal Checks an actor's `storeResults` and `resultTtlMs` when it is
 * declared, and returns what the plugin will do for it.
 */
export function actorPolicy(
  actor: ActorDefinition,
  defaults: ResolvedResultsOptions,
): ActorResultsPolicy {
  const { storeResults, resultTtlMs } = actor.options as ResultsActorOptions
  if (storeResults !== undefined && typeof storeResults !== 'boolean') {
    throw new InvalidOptionError(
      `Invalid option storeResults for actor ${actor.name}: expected true or false, got ${describeValue(storeResults)}`,
    )
  }
  if (resultTtlMs !== undefined && !positiveInteger(resultTtlMs)) {
    throw new InvalidOptionError(
      `Invalid option resultTtlMs for actor ${actor.name}: expected an integer of at least 1 (milliseconds), got ${describeValue(resultTtlMs)}`,
    )
  }
  const store = storeResults ?? defaults.storeResults
  // A TTL on an actor that stores nothing is a mistake that would go unnoticed.
  if (resultTtlMs !== undefined && !store) {
    throw new InvalidOptionError(
      `Invalid option resultTtlMs for actor ${actor.name}: it has no effect without storeResults: true`,
    )
  }
  return { store, ttlMs: resultTtlMs ?? defaults.resultTtlMs }
}
