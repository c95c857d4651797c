import { occurrenceAfter, occurrencesWithin, type ScheduleTiming } from './schedule-timing.js'

/**
 * What to do with occurrences that were missed (a scheduler outage, a long
 * tick): `'latest'` publishes one message, for the most recent missed
 * occurrence (the reference's coalescing); `{ max, withinMs }` publishes up
 * to `max` of the most recent ones, oldest first, each with its own intended
 * time, ignoring those older than `withinMs` (default: no age limit).
 *
 * @example
 * const coalesce: CatchUp = 'latest'
 * const backfill: CatchUp = { max: 5, withinMs: 3_600_000 }
 */
export type CatchUp = 'latest' | { readonly max: number; readonly withinMs?: number | undefined }

/**
 * The plan for one due schedule: the intended times to publish (oldest
 * first) and the next run to store (null when the schedule has ended).
 *
 * @example
 * const plan: TickPlan = { intendedMs: [60_000], nextRunMs: 120_000 }
 */
export interface TickPlan {
  readonly intendedMs: readonly number[]
  readonly nextRunMs: number | null
}

/**
 * Plans a tick for a schedule whose next run `dueMs` has come (`dueMs <=
 * nowMs`, both PostgreSQL's clock): which occurrences to publish and where
 * to advance. Pure: the clock is an argument.
 *
 * The next run is always strictly after `nowMs`, so an occurrence is never
 * planned twice by two ticks.
 *
 * @example
 * const timing = { kind: 'interval', everyMs: 1_000, anchorMs: 0 } as const
 * planTick(timing, 'latest', 1_000, 60_500) // { intendedMs: [60_000], nextRunMs: 61_000 }
 * planTick(timing, { max: 5 }, 1_000, 60_500) // { intendedMs: [56_000, ..., 60_000], nextRunMs: 61_000 }
 */
export function planTick(
  timing: ScheduleTiming,
  catchUp: CatchUp,
  dueMs: number,
  nowMs: number,
): TickPlan {
  const nextRunMs = occurrenceAfter(timing, nowMs)
  if (dueMs > nowMs) return { intendedMs: [], nextRunMs: dueMs }
  if (catchUp === 'latest') {
    const [latest] = occurrencesWithin(timing, dueMs, nowMs, 1)
    // dueMs itself is an occurrence; the fallback covers a timing edited under it.
    return { intendedMs: [latest ?? dueMs], nextRunMs }
  }
  const from = catchUp.withinMs === undefined ? dueMs : Math.max(dueMs, nowMs - catchUp.withinMs)
  return { intendedMs: occurrencesWithin(timing, from, nowMs, catchUp.max), nextRunMs }
}

/**
 * Where a new (or re-enabled) schedule starts: its first occurrence at or
 * after `nowMs` (cron) or its anchor (interval, so a new interval schedule
 * is due at once, as in the reference; an anchor in the past is caught up
 * by its `catchUp`).
 *
 * @example
 * firstRun({ kind: 'interval', everyMs: 60_000, anchorMs: 1_000 }, 5_000) // 1_000
 * firstRun({ kind: 'cron', cron: '0 * * * *', timezone: 'UTC' }, Date.UTC(2026, 0, 1, 0, 30)) // 01:00Z
 */
export function firstRun(timing: ScheduleTiming, nowMs: number): number | null {
  if (timing.kind === 'interval') {
    return timing.endAtMs !== undefined && timing.anchorMs >= timing.endAtMs
      ? null
      : timing.anchorMs
  }
  return occurrenceAfter(timing, nowMs - 1)
}

/**
 * Where a schedule resumes after `enable()` or a changed timing: its first
 * occurrence at or after `nowMs`, so the time it was off is not caught up.
 *
 * @example
 * resumeRun({ kind: 'interval', everyMs: 60_000, anchorMs: 0 }, 90_000) // 120_000
 */
export function resumeRun(timing: ScheduleTiming, nowMs: number): number | null {
  return occurrenceAfter(timing, nowMs - 1)
}

/**
 * The next `count` occurrences from `fromMs` (inclusive), for `nextRuns()`.
 *
 * @example
 * upcomingRuns({ kind: 'interval', everyMs: 1_000, anchorMs: 0 }, 5_000, 3) // [5000, 6000, 7000]
 */
export function upcomingRuns(timing: ScheduleTiming, fromMs: number, count: number): number[] {
  const out: number[] = []
  let next = occurrenceAfter(timing, fromMs - 1)
  while (next !== null && out.length < count) {
    out.push(next)
    next = occurrenceAfter(timing, next)
  }
  return out
}
