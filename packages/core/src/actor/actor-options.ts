import { describeValue } from '@iddqueue/schema'

import {
  checkFunction,
  checkInteger,
  checkKnownKeys,
  INT4_MAX,
  labelledRefusal,
  refuseOption,
} from '../options/check-option.js'
import { assertName } from './names.js'

/**
 * An error class, for `throws`.
 *
 * @example
 * class InvalidAddressError extends Error {}
 * const permanent: ErrorClass[] = [TypeError, InvalidAddressError]
 * broker.actor(
 *   'send_email',
 *   async (to: string) => {
 *     if (!to.includes('@')) throw new InvalidAddressError(to)
 *   },
 *   { throws: permanent },
 * )
 */
export type ErrorClass = abstract new (...args: never[]) => Error

/**
 * An actor, or its name: where callbacks go.
 *
 * @example
 * const alertOps = broker.actor('alert_ops', (message: EncodedMessage) => console.error(message.id))
 * broker.actor('charge', charge, { onRetryExhausted: alertOps, onFailure: 'log_failure' })
 */
export type ActorReference = string | { readonly name: string }

/**
 * How an actor's messages are queued, retried and limited. Plugins add their
 * own keys (for example `storeResults` from `@iddqueue/results`) through
 * declaration merging; any other key is refused when the actor is declared.
 *
 * @example
 * broker.actor('send_email', sendEmail, {
 *   queue: 'emails',
 *   maxRetries: 5,
 *   minBackoffMs: 1_000,
 *   throws: [InvalidAddressError],
 *   timeLimitMs: 30_000,
 * })
 */
export interface ActorOptions {
  /** Default `'default'`. */
  queue?: string | undefined
  /** Smaller runs first. Default 0. */
  priority?: number | undefined
  /** Failed attempts retried before the message is rejected. Default 20. */
  maxRetries?: number | undefined
  /** Backoff before the first retry; doubles each time, with jitter. Default 15,000 ms. */
  minBackoffMs?: number | undefined
  /** Longest backoff. Default 7 days. */
  maxBackoffMs?: number | undefined
  /** Decides whether to retry, instead of `maxRetries`. */
  retryWhen?: ((retries: number, error: unknown) => boolean) | undefined
  /** Errors of these classes are never retried. */
  throws?: readonly ErrorClass[] | undefined
  /** Receives `(message, { retries, maxRetries })` when retries run out. */
  onRetryExhausted?: ActorReference | undefined
  /** The handler's signal aborts after this long and the attempt fails. Default 600,000 ms (10 minutes). */
  timeLimitMs?: number | undefined
  /** Messages older than this (since first enqueued, retries included) are rejected unrun. */
  maxAgeMs?: number | undefined
  /** Receives `(message, result)` after each success. */
  onSuccess?: ActorReference | undefined
  /** Receives `(message, { type, message })` after each failed attempt, retried or not. */
  onFailure?: ActorReference | undefined
  /** Abort the handler's signal as soon as its worker begins a graceful stop. Default false. */
  notifyShutdown?: boolean | undefined
  /**
   * Run the handler inside a transaction (`ctx.transaction`, see
   * `TransactionalContext`) that also settles the message, so its
   * database writes commit with the acknowledgement or not at all. Each
   * running handler holds a pool connection. Default false.
   */
  transactional?: boolean | undefined
}

/**
 * An actor's options with every default filled in, as `actor.options` shows them.
 *
 * @example
 * const options: ResolvedActorOptions = add.options
 * console.log(options.queue, options.maxRetries) // 'default', 20
 */
export interface ResolvedActorOptions extends ActorOptions {
  readonly queue: string
  readonly priority: number
  readonly maxRetries: number
  readonly minBackoffMs: number
  readonly maxBackoffMs: number
  readonly timeLimitMs: number
  readonly throws: readonly ErrorClass[]
  readonly notifyShutdown: boolean
  readonly transactional: boolean
}

/**
 * Defaults of {@link ActorOptions}.
 *
 * @example
 * console.log(ACTOR_DEFAULTS.maxRetries, ACTOR_DEFAULTS.timeLimitMs) // 20 600000
 */
export const ACTOR_DEFAULTS = Object.freeze({
  queue: 'default',
  priority: 0,
  maxRetries: 20,
  minBackoffMs: 15_000,
  maxBackoffMs: 7 * 24 * 3600 * 1000,
  timeLimitMs: 10 * 60 * 1000,
  notifyShutdown: false,
  transactional: false,
})

const CORE_KEYS = [
  'queue',
  'priority',
  'maxRetries',
  'minBackoffMs',
  'maxBackoffMs',
  'retryWhen',
  'throws',
  'onRetryExhausted',
  'timeLimitMs',
  'maxAgeMs',
  'onSuccess',
  'onFailure',
  'notifyShutdown',
  'transactional',
] as const

function integer(
  actor: string,
  key: string,
  value: unknown,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): void {
  checkInteger(key, value, { min, max, where: `for actor ${actor}` })
}

function reference(actor: string, key: string, value: unknown): void {
  if (value === undefined) return
  const name =
    typeof value === 'object' && value !== null ? (value as { name?: unknown }).name : value
  if (typeof name !== 'string') {
    throw labelledRefusal(
      key,
      value,
      'an actor or an actor name',
      `option ${key} for actor ${actor}`,
    )
  }
  assertName('actor', name)
}

/** @internal The name of a referenced actor. */
export function referenceName(value: ActorReference): string {
  return typeof value === 'string' ? value : value.name
}

/**
 * @internal Checks an actor's options and fills in defaults. `pluginKeys`
 * are the keys plugins own.
 */
export function resolveActorOptions(
  actor: string,
  options: Readonly<Record<string, unknown>>,
  pluginKeys: ReadonlySet<string>,
): ResolvedActorOptions & Readonly<Record<string, unknown>> {
  const known = [...CORE_KEYS, ...pluginKeys]
  checkKnownKeys(
    options,
    known,
    (key) =>
      `Unknown option ${JSON.stringify(key)} for actor ${actor}: expected one of ${known.join(', ')} (a plugin may own it: is it in plugins?)`,
  )
  const o = options as ActorOptions
  if (o.queue !== undefined) assertName('queue', o.queue)
  integer(actor, 'priority', o.priority, -INT4_MAX, INT4_MAX)
  integer(actor, 'maxRetries', o.maxRetries, 0, 1_000_000)
  integer(actor, 'minBackoffMs', o.minBackoffMs, 0)
  integer(actor, 'maxBackoffMs', o.maxBackoffMs, 0)
  integer(actor, 'timeLimitMs', o.timeLimitMs, 1)
  integer(actor, 'maxAgeMs', o.maxAgeMs, 1)
  checkFunction(
    'retryWhen',
    o.retryWhen,
    `option retryWhen for actor ${actor}`,
    'a function (retries, error) => boolean',
  )
  if (
    o.throws !== undefined &&
    (!Array.isArray(o.throws) || o.throws.some((c) => typeof c !== 'function'))
  ) {
    throw labelledRefusal(
      'throws',
      o.throws,
      'an array of error classes',
      `option throws for actor ${actor}`,
    )
  }
  if (o.notifyShutdown !== undefined && typeof o.notifyShutdown !== 'boolean') {
    throw labelledRefusal(
      'notifyShutdown',
      o.notifyShutdown,
      'a boolean',
      `option notifyShutdown for actor ${actor}`,
    )
  }
  if (o.transactional !== undefined && typeof o.transactional !== 'boolean') {
    throw refuseOption(
      `Invalid option transactional for actor ${actor}: expected a boolean, got ${describeValue(o.transactional)}`,
      { option: 'transactional', value: o.transactional, expected: 'a boolean' },
    )
  }
  reference(actor, 'onRetryExhausted', o.onRetryExhausted)
  reference(actor, 'onSuccess', o.onSuccess)
  reference(actor, 'onFailure', o.onFailure)
  const resolved = { ...ACTOR_DEFAULTS, ...options } as ResolvedActorOptions &
    Readonly<Record<string, unknown>>
  if (resolved.minBackoffMs > resolved.maxBackoffMs) {
    throw refuseOption(
      `Invalid options for actor ${actor}: minBackoffMs (${resolved.minBackoffMs}) is larger than maxBackoffMs (${resolved.maxBackoffMs})`,
      {
        option: 'minBackoffMs',
        value: resolved.minBackoffMs,
        expected: `an integer of at most maxBackoffMs (${resolved.maxBackoffMs})`,
      },
    )
  }
  return Object.freeze({ ...resolved, throws: resolved.throws ?? [] })
}
