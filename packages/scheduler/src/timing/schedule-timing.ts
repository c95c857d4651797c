import { Cron } from 'croner'

/**
 * When a schedule's occurrences fall, as plain data: every `everyMs` from
 * `anchorMs`, or a cron expression in an IANA time zone. Times are epoch
 * milliseconds; `endAtMs` is exclusive, `startAtMs` inclusive.
 *
 * @example
 * const every15: ScheduleTiming = { kind: 'interval', everyMs: 900_000, anchorMs: Date.UTC(2026, 0, 1) }
 * const nightly: ScheduleTiming = { kind: 'cron', cron: '0 3 * * *', timezone: 'Europe/Paris' }
 */
export type ScheduleTiming = IntervalTiming | CronTiming

/**
 * A fixed interval: occurrences at `anchorMs + k * everyMs` (k = 0, 1, 2, ...).
 *
 * @example
 * const timing: IntervalTiming = { kind: 'interval', everyMs: 60_000, anchorMs: Date.now() }
 */
export interface IntervalTiming {
  readonly kind: 'interval'
  readonly everyMs: number
  /** The grid's origin: `startAt`, or when the schedule was created. */
  readonly anchorMs: number
  readonly endAtMs?: number | undefined
}

/**
 * A cron expression (5 or 6 fields, as croner reads it) in an IANA time zone.
 *
 * @example
 * const timing: CronTiming = { kind: 'cron', cron: '*\/15 * * * *', timezone: 'America/New_York' }
 */
export interface CronTiming {
  readonly kind: 'cron'
  readonly cron: string
  readonly timezone: string
  readonly startAtMs?: number | undefined
  readonly endAtMs?: number | undefined
}

/** @internal The latest time a Date holds (+275760-09-13T00:00:00Z): no occurrence falls after it. */
export const MAX_DATE_MS = 8_640_000_000_000_000

/**
 * @internal The latest cron occurrence computed. croner works in the schedule's local
 * time and throws a RangeError once that reaches past the latest Date (from
 * about a day before it, in UTC+14); a week's margin keeps every zone clear.
 */
export const LATEST_CRON_MS = MAX_DATE_MS - 7 * 86_400_000

// Parsing a pattern is the costly part of croner: keep one Cron per (pattern, zone).
const crons = new Map<string, Cron>()
const MAX_CACHED = 1_000

/** @internal A croner instance with no timer: only its date maths is used. */
export function cronOf(cron: string, timezone: string): Cron {
  const key = `${timezone}\u0000${cron}`
  let parsed = crons.get(key)
  if (!parsed) {
    parsed = new Cron(cron, { timezone, paused: true })
    if (crons.size >= MAX_CACHED) crons.clear()
    crons.set(key, parsed)
  }
  return parsed
}

/**
 * The first occurrence strictly after `afterMs`, or null when there is none
 * before `endAt` (or before the latest Date; a week before it for cron).
 *
 * @example
 * occurrenceAfter({ kind: 'interval', everyMs: 1_000, anchorMs: 0 }, 1_500) // 2_000
 */
export function occurrenceAfter(timing: ScheduleTiming, afterMs: number): number | null {
  let next: number | null
  if (timing.kind === 'interval') {
    const { everyMs, anchorMs } = timing
    next =
      afterMs < anchorMs
        ? anchorMs
        : anchorMs + (Math.floor((afterMs - anchorMs) / everyMs) + 1) * everyMs
    // A long everyMs steps past what a Date (and a stored time) can hold.
    if (next > MAX_DATE_MS) next = null
  } else {
    // croner works in whole seconds and returns the first run strictly after its argument.
    const from =
      timing.startAtMs !== undefined && timing.startAtMs > afterMs ? timing.startAtMs - 1 : afterMs
    next =
      from >= LATEST_CRON_MS
        ? null
        : (cronOf(timing.cron, timing.timezone).nextRun(new Date(from))?.getTime() ?? null)
    if (next !== null && next > LATEST_CRON_MS) next = null
  }
  return next !== null && timing.endAtMs !== undefined && next >= timing.endAtMs ? null : next
}

/**
 * The first occurrence at or after `atMs`, or null.
 *
 * @example
 * occurrenceAtOrAfter({ kind: 'interval', everyMs: 1_000, anchorMs: 0 }, 2_000) // 2_000
 */
export function occurrenceAtOrAfter(timing: ScheduleTiming, atMs: number): number | null {
  return occurrenceAfter(timing, atMs - 1)
}

/**
 * Up to `max` occurrences in `[fromMs, toMs]`, the most recent ones, oldest
 * first.
 *
 * @example
 * occurrencesWithin({ kind: 'interval', everyMs: 1_000, anchorMs: 0 }, 0, 10_000, 3) // [8000, 9000, 10000]
 */
export function occurrencesWithin(
  timing: ScheduleTiming,
  fromMs: number,
  toMs: number,
  max: number,
): number[] {
  if (toMs < fromMs || max < 1) return []
  const latest = timing.kind === 'interval' ? MAX_DATE_MS : LATEST_CRON_MS
  const upper = Math.min(toMs, latest, timing.endAtMs !== undefined ? timing.endAtMs - 1 : latest)
  if (timing.kind === 'interval') {
    const { everyMs, anchorMs } = timing
    if (upper < anchorMs) return []
    const last = anchorMs + Math.floor((upper - anchorMs) / everyMs) * everyMs
    const out: number[] = []
    for (let t = last; t >= fromMs && t >= anchorMs && out.length < max; t -= everyMs) out.push(t)
    return out.reverse()
  }
  // previousRuns is strictly before its reference, in whole seconds: start
  // one second past `upper` and drop what lies beyond it.
  const runs = cronOf(timing.cron, timing.timezone)
    .previousRuns(max + 1, new Date(upper + 1_000))
    .map((date) => date.getTime())
    .filter(
      (t) => t <= upper && t >= fromMs && (timing.startAtMs === undefined || t >= timing.startAtMs),
    )
  return runs.slice(0, max).reverse()
}
