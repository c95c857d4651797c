import { assertQueueName, InvalidOptionError } from '@iddqueue/core'
import { checkDuration, checkInteger, checkKey } from './check.js'
import type { CoordinationLatch } from './coordination-setup.js'
import { type DeclaredValues, MAX_RATE_LIMIT } from './limit-options.js'
import { dropEmptyLimitSql, listLimitsSql, setLimitSql } from './sql/limits-sql.js'

/**
 * What a limit applies to: every message of a queue, of an actor, or with a key.
 *
 * @example
 * const target: LimitTarget = { key: 'customer:42' }
 */
export type LimitTarget =
  | { readonly queue: string }
  | { readonly actor: string }
  | { readonly key: string }

/**
 * A limit's values; `null` (or absent) clears one.
 *
 * @example
 * const values: LimitValues = { concurrency: 4, rate: { limit: 100, periodMs: 1_000 } }
 */
export interface LimitValues {
  /** At most this many running at once. */
  readonly concurrency?: number | null
  /** At most `limit` started per `periodMs`. */
  readonly rate?: { readonly limit: number; readonly periodMs: number } | null
}

/**
 * A stored limit, as {@link CoordinationPlugin.listLimits} returns it.
 *
 * @example
 * for (const limit of await coord.listLimits()) console.log(limit.scope, limit.name, limit.concurrency)
 */
export interface LimitInfo {
  readonly scope: 'queue' | 'actor' | 'key'
  readonly name: string
  /** The concurrency limit: set by `setLimit`, or else the actor option's. */
  readonly concurrency: number | null
  /** Messages holding a slot of this limit now (running). */
  readonly running: number
  readonly rate: { readonly limit: number; readonly periodMs: number } | null
  /** For a rate: the places free now (starts the claim may still make in this period). */
  readonly tokens: number | null
  /** For a rate with no place free: when the next one frees. */
  readonly nextTokenAt: Date | null
  /** Set while a `RateLimited` throw with this key holds it. */
  readonly heldUntil: Date | null
  readonly updatedAt: Date
}

interface Row {
  scope: LimitInfo['scope']
  name: string
  concurrency: number | null
  running: number
  rate_limit: number | null
  rate_period_ms: number | null
  held_until: Date | null
  tokens: number | null
  full_until: Date | null
  updated_at: Date
}

/** @internal The (scope, name) of a target, checked. */
export function limitTarget(target: unknown): [LimitInfo['scope'], string] {
  if (typeof target !== 'object' || target === null)
    throw new InvalidOptionError('Invalid limit target: expected { queue }, { actor } or { key }')
  const keys = Object.keys(target)
  if (keys.length !== 1 || !['queue', 'actor', 'key'].includes(keys[0]!))
    throw new InvalidOptionError(
      `Invalid limit target with ${keys.join(', ') || 'no keys'}: expected exactly one of queue, actor, key`,
    )
  const scope = keys[0] as LimitInfo['scope']
  const name = (target as Record<string, unknown>)[scope]
  if (scope === 'queue') assertQueueName(name as string)
  else checkKey(`limit ${scope}`, name)
  return [scope, name as string]
}

/** @internal `setLimit()`: checked before any SQL. */
export async function setLimit(
  latch: CoordinationLatch,
  target: LimitTarget,
  values: LimitValues,
): Promise<void> {
  const [scope, name] = limitTarget(target)
  if (typeof values !== 'object' || values === null)
    throw new InvalidOptionError('Invalid limit values: expected { concurrency?, rate? }')
  const what = `the ${scope} limit ${name}`
  const concurrency =
    values.concurrency == null ? null : checkInteger(what, 'concurrency', values.concurrency)
  let rateLimit: number | null = null
  let periodMs: number | null = null
  if (values.rate != null) {
    if (typeof values.rate !== 'object')
      throw new InvalidOptionError(`Invalid rate for ${what}: expected { limit, periodMs }`)
    rateLimit = checkInteger(what, 'rate.limit', values.rate.limit, { max: MAX_RATE_LIMIT })
    periodMs = checkDuration(what, 'rate.periodMs', values.rate.periodMs)
  }
  const setup = await latch.wait('set a limit')
  await setup.executor.transaction(async (tx) => {
    await tx.query(setLimitSql(setup.ns), [scope, name, concurrency, rateLimit, periodMs])
    await tx.query(dropEmptyLimitSql(setup.ns), [scope, name])
  })
}

/**
 * @internal `listLimits()`: the stored limits and the running messages'
 * and rate windows' limits, with the actor and queue limits this process
 * declares (so a declared limit is listed while nothing runs).
 */
export async function listLimits(
  latch: CoordinationLatch,
  declared: readonly (readonly [LimitInfo['scope'], string, DeclaredValues])[],
): Promise<LimitInfo[]> {
  const setup = await latch.wait('list limits')
  const rows = await setup.executor.query<Row>(listLimitsSql(setup.ns), [
    declared.map(([scope]) => scope),
    declared.map(([, name]) => name),
    declared.map(([, , values]) => values.concurrency ?? null),
    declared.map(([, , values]) => values.rate?.limit ?? null),
    declared.map(([, , values]) => values.rate?.periodMs ?? null),
  ])
  return rows.map((row) => ({
    scope: row.scope,
    name: row.name,
    concurrency: row.concurrency,
    running: row.running,
    rate:
      row.rate_limit === null || row.rate_period_ms === null
        ? null
        : { limit: row.rate_limit, periodMs: row.rate_period_ms },
    tokens: row.tokens,
    nextTokenAt: row.tokens === 0 ? row.full_until : null,
    heldUntil: row.held_until,
    updatedAt: row.updated_at,
  }))
}
