import { createHash } from 'node:crypto'
import {
  assertQueueName,
  encodeJson,
  InvalidOptionError,
  PayloadTooLargeError,
} from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import type { CatchUp } from '../timing/plan-tick.js'
import {
  cronOf,
  LATEST_CRON_MS,
  MAX_DATE_MS,
  type ScheduleTiming,
} from '../timing/schedule-timing.js'
import type { Overlap, ScheduleDefinition } from './schedule-definition.js'

/** @internal A definition checked and normalised, ready to store. */
export interface ResolvedSchedule {
  readonly name: string
  readonly actor: string
  readonly queue: string
  readonly args: readonly unknown[]
  readonly argsJson: string
  readonly priority: number
  readonly everyMs: number | null
  readonly cron: string | null
  readonly timezone: string | null
  readonly startAtMs: number | null
  readonly endAtMs: number | null
  readonly enabled: boolean
  readonly catchUp: CatchUp
  readonly overlap: Overlap
  /** A digest of everything above: `define()` rewrites a row only when it changes. */
  readonly hash: string
}

/** @internal The queue and priority a template gets when it names neither. */
export type TemplateDefaults = (actor: string) => {
  readonly queue: string
  readonly priority: number
}

const KEYS = new Set([
  'name',
  'actor',
  'queue',
  'args',
  'priority',
  'everyMs',
  'cron',
  'timezone',
  'startAt',
  'endAt',
  'enabled',
  'catchUp',
  'overlap',
])
const ACTOR = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$/
const INT4_MAX = 2_147_483_647
/** Bounds what one tick publishes for one schedule. */
export const MAX_CATCH_UP = 1_000

/** @internal Checks a schedule name. */
export function assertScheduleName(name: unknown): asserts name is string {
  if (
    typeof name !== 'string' ||
    name.length < 1 ||
    name.length > 128 ||
    // Control characters (U+0000 to U+001F, U+007F) would garble logs and CLI output.
    [...name].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f) ||
    !name.isWellFormed()
  ) {
    throw new InvalidOptionError(
      `Invalid schedule name ${describeValue(name)}: expected 1 to 128 characters without control characters`,
    )
  }
}

/** @internal PostgreSQL's earliest timestamptz, 4714-11-24T00:00:00Z BC: an earlier time cannot be stored. */
export const MIN_TIME_MS = -210_866_803_200_000

/** A Date's time; NaN for an object that only inherits from Date.prototype (its getTime throws). */
function dateTime(value: Date): number {
  try {
    return Date.prototype.getTime.call(value)
  } catch {
    return Number.NaN
  }
}

/** @internal Epoch ms of a Date, an ISO 8601 string with a zone, or epoch ms. */
function toMs(what: string, value: Date | string | number): number {
  const ms =
    value instanceof Date
      ? dateTime(value)
      : typeof value === 'number'
        ? value
        : typeof value === 'string' && /(?:Z|[+-]\d\d:?\d\d)$/i.test(value.trim())
          ? Date.parse(value)
          : Number.NaN
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_DATE_MS) {
    throw new InvalidOptionError(
      `${what} ${describeValue(value)}: expected a Date, epoch milliseconds, or an ISO 8601 time with a zone (2026-01-01T09:00:00Z)`,
    )
  }
  if (Math.trunc(ms) < MIN_TIME_MS) {
    throw new InvalidOptionError(
      `${what} ${new Date(ms).toISOString()}: expected a time from ${new Date(MIN_TIME_MS).toISOString()} (PostgreSQL's earliest) to ${new Date(MAX_DATE_MS).toISOString()}`,
    )
  }
  return Math.trunc(ms)
}

/** @internal Checks an IANA time zone name. */
export function assertTimezone(where: string, timezone: unknown): asserts timezone is string {
  let ok = typeof timezone === 'string' && timezone.length > 0 && timezone.length <= 64
  if (ok) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: timezone as string })
    } catch {
      ok = false
    }
  }
  if (!ok) {
    throw new InvalidOptionError(
      `${where}: unknown time zone ${describeValue(timezone)}: expected an IANA name such as 'Europe/Paris' or 'UTC'`,
    )
  }
}

function resolveCatchUp(where: string, value: unknown): CatchUp {
  if (value === undefined || value === 'latest') return 'latest'
  const fail = (): never => {
    throw new InvalidOptionError(
      `${where}: invalid catchUp ${describeValue(value)}: expected 'latest' or { max: 1..${MAX_CATCH_UP}, withinMs?: a positive integer }`,
    )
  }
  if (typeof value !== 'object' || value === null) return fail()
  const { max, withinMs, ...rest } = value as { max?: unknown; withinMs?: unknown }
  if (Object.keys(rest).length > 0) fail()
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > MAX_CATCH_UP) fail()
  if (
    withinMs !== undefined &&
    (typeof withinMs !== 'number' || !Number.isSafeInteger(withinMs) || withinMs <= 0)
  )
    fail()
  return withinMs === undefined
    ? { max: max as number }
    : { max: max as number, withinMs: withinMs as number }
}

/**
 * @internal Checks a definition and fills its defaults, before any SQL.
 * Throws `InvalidOptionError` (or `InvalidIdentifierError`,
 * `InvalidPayloadError`, `PayloadTooLargeError`) naming the schedule, the
 * field and the value.
 */
export function resolveDefinition(
  definition: ScheduleDefinition,
  defaults: TemplateDefaults,
  maxPayloadBytes: number,
): ResolvedSchedule {
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) {
    throw new InvalidOptionError(
      `Invalid schedule ${describeValue(definition)}: expected an object`,
    )
  }
  assertScheduleName(definition.name)
  const where = `Schedule ${describeValue(definition.name)}`
  const fail = (text: string): never => {
    throw new InvalidOptionError(`${where}: ${text}`)
  }
  for (const key of Object.keys(definition)) if (!KEYS.has(key)) fail(`unknown option ${key}`)
  const d = definition
  if (typeof d.actor !== 'string' || !ACTOR.test(d.actor)) {
    fail(
      `invalid actor name ${describeValue(d.actor)}: expected 1 to 128 ASCII letters, digits, '_', '.', ':' or '-'`,
    )
  }
  const fallback = d.queue === undefined || d.priority === undefined ? defaults(d.actor) : undefined
  const queue = d.queue ?? fallback!.queue
  try {
    assertQueueName(queue)
  } catch (error) {
    throw new InvalidOptionError(`${where}: ${(error as Error).message}`, { cause: error })
  }
  const priority = d.priority ?? fallback!.priority
  if (!Number.isInteger(priority) || Math.abs(priority) > INT4_MAX) {
    fail(
      `invalid priority ${describeValue(priority)}: expected an integer from -${INT4_MAX} to ${INT4_MAX}`,
    )
  }
  const args = d.args ?? []
  if (!Array.isArray(args)) fail(`invalid args ${describeValue(args)}: expected an array`)
  let argsJson: string
  try {
    argsJson = encodeJson(args, 'args')
  } catch (error) {
    ;(error as Error).message = `${where}: ${(error as Error).message}`
    throw error
  }
  const bytes = Buffer.byteLength(argsJson)
  if (bytes > maxPayloadBytes) {
    throw new PayloadTooLargeError(
      `${where}: args are ${bytes} bytes of JSON, over the limit of ${maxPayloadBytes} bytes (maxPayloadBytes)`,
    )
  }
  if ((d.everyMs === undefined) === (d.cron === undefined)) {
    fail('give everyMs or cron (exactly one)')
  }
  let everyMs: number | null = null
  let cron: string | null = null
  let timezone: string | null = null
  if (d.everyMs !== undefined) {
    if (typeof d.everyMs !== 'number' || !Number.isSafeInteger(d.everyMs) || d.everyMs <= 0) {
      fail(
        `invalid everyMs ${describeValue(d.everyMs)}: expected a positive integer of milliseconds`,
      )
    }
    if (d.timezone !== undefined) fail('timezone applies to cron schedules only')
    everyMs = d.everyMs
  } else {
    if (typeof d.cron !== 'string' || d.cron.trim() === '' || d.cron.length > 256) {
      fail(`invalid cron ${describeValue(d.cron)}: expected a cron expression such as '0 3 * * *'`)
    }
    timezone = d.timezone ?? 'UTC'
    assertTimezone(where, timezone)
    cron = (d.cron as string).trim()
    try {
      cronOf(cron, timezone)
    } catch (error) {
      throw new InvalidOptionError(
        `${where}: invalid cron ${describeValue(cron)}: ${(error as Error).message}`,
        { cause: error },
      )
    }
  }
  const startAtMs = d.startAt === undefined ? null : toMs(`${where}: invalid startAt`, d.startAt)
  const endAtMs = d.endAt === undefined ? null : toMs(`${where}: invalid endAt`, d.endAt)
  if (cron !== null && startAtMs !== null && startAtMs > LATEST_CRON_MS) {
    fail(
      `invalid startAt ${new Date(startAtMs).toISOString()}: a cron schedule starts at the latest at ${new Date(LATEST_CRON_MS).toISOString()} (its occurrences are not computed past it)`,
    )
  }
  if (startAtMs !== null && endAtMs !== null && endAtMs <= startAtMs) {
    fail(
      `endAt ${new Date(endAtMs).toISOString()} is not after startAt ${new Date(startAtMs).toISOString()}`,
    )
  }
  if (d.enabled !== undefined && typeof d.enabled !== 'boolean') {
    fail(`invalid enabled ${describeValue(d.enabled)}: expected true or false`)
  }
  const catchUp = resolveCatchUp(where, d.catchUp)
  const overlap = d.overlap ?? 'allow'
  if (overlap !== 'allow' && overlap !== 'skip') {
    fail(`invalid overlap ${describeValue(overlap)}: expected 'allow' or 'skip'`)
  }
  const body = {
    name: d.name,
    actor: d.actor,
    queue,
    argsJson,
    priority,
    everyMs,
    cron,
    timezone,
    startAtMs,
    endAtMs,
    enabled: d.enabled ?? true,
    catchUp,
    overlap,
  }
  const hash = createHash('sha256').update(JSON.stringify(body)).digest('base64url')
  return { ...body, args, hash }
}

/** @internal The timing of a resolved schedule; `anchorMs` is the interval grid's origin. */
export function timingOf(
  schedule: Pick<ResolvedSchedule, 'everyMs' | 'cron' | 'timezone' | 'startAtMs' | 'endAtMs'>,
  anchorMs: number,
): ScheduleTiming {
  const endAtMs = schedule.endAtMs ?? undefined
  if (schedule.everyMs !== null) {
    return { kind: 'interval', everyMs: schedule.everyMs, anchorMs, endAtMs }
  }
  return {
    kind: 'cron',
    cron: schedule.cron!,
    timezone: schedule.timezone!,
    startAtMs: schedule.startAtMs ?? undefined,
    endAtMs,
  }
}
