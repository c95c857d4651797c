import { describe, expect, it } from 'vitest'
import { firstRun, planTick, resumeRun } from './plan-tick.js'
import type { CronTiming, IntervalTiming } from './schedule-timing.js'

const every: IntervalTiming = { kind: 'interval', everyMs: 1_000, anchorMs: 0 }
const at = (text: string) => Date.parse(text)

/** A fake scheduler: ticks at the given clock readings and collects what it publishes. */
function run(
  timing: CronTiming | IntervalTiming,
  catchUp: Parameters<typeof planTick>[1],
  clock: number[],
) {
  let next = firstRun(timing, clock[0]!)
  const published: number[] = []
  for (const now of clock) {
    if (next === null || next > now) continue
    const plan = planTick(timing, catchUp, next, now)
    published.push(...plan.intendedMs)
    next = plan.nextRunMs
  }
  return published
}

describe('planTick', () => {
  it('publishes the due occurrence and advances strictly past now', () => {
    expect(planTick(every, 'latest', 5_000, 5_003)).toEqual({
      intendedMs: [5_000],
      nextRunMs: 6_000,
    })
  })

  it('coalesces a one-minute outage into one message for the latest missed occurrence', () => {
    expect(planTick(every, 'latest', 1_000, 61_250)).toEqual({
      intendedMs: [61_000],
      nextRunMs: 62_000,
    })
  })

  it('backfills up to max occurrences, oldest first, each with its intended time', () => {
    expect(planTick(every, { max: 5 }, 1_000, 61_250)).toEqual({
      intendedMs: [57_000, 58_000, 59_000, 60_000, 61_000],
      nextRunMs: 62_000,
    })
  })

  it('backfills only within withinMs', () => {
    expect(planTick(every, { max: 100, withinMs: 2_500 }, 1_000, 61_250).intendedMs).toEqual([
      59_000, 60_000, 61_000,
    ])
  })

  it('stops at endAt', () => {
    expect(planTick({ ...every, endAtMs: 3_000 }, 'latest', 2_000, 10_000)).toEqual({
      intendedMs: [2_000],
      nextRunMs: null,
    })
  })

  it('publishes every occurrence exactly once with an injected clock that ticks late and irregularly', () => {
    const clock = [0, 3, 999, 1_000, 1_700, 2_001, 2_002, 3_999, 4_000, 4_000, 5_500]
    expect(run(every, { max: 10 }, clock)).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000])
  })

  it('publishes each quarter hour of a DST night once when ticked every minute (Europe/Paris, autumn)', () => {
    const timing: CronTiming = { kind: 'cron', cron: '*/15 * * * *', timezone: 'Europe/Paris' }
    const start = at('2026-10-24T23:50:00Z')
    const clock = Array.from({ length: 150 }, (_, i) => start + i * 60_000 + 7)
    const published = run(timing, 'latest', clock)
    expect(published.length).toBe(10) // 00:00Z to 02:15Z, every 15 real minutes
    expect(new Set(published).size).toBe(published.length)
    expect(published[0]).toBe(at('2026-10-25T00:00:00Z'))
    expect(published.at(-1)).toBe(at('2026-10-25T02:15:00Z'))
  })

  it('publishes the spring-gap fixed-time run once (America/New_York)', () => {
    const timing: CronTiming = { kind: 'cron', cron: '30 2 * * *', timezone: 'America/New_York' }
    const start = at('2026-03-08T00:00:00Z')
    const clock = Array.from({ length: 48 * 60 }, (_, i) => start + i * 60_000)
    expect(run(timing, 'latest', clock).map((t) => new Date(t).toISOString())).toEqual([
      '2026-03-08T07:00:00.000Z',
      '2026-03-09T06:30:00.000Z',
    ])
  })
})

describe('firstRun and resumeRun', () => {
  it('makes a new interval schedule due at once and resumes on the grid', () => {
    expect(firstRun({ ...every, anchorMs: 42_000 }, 42_000)).toBe(42_000)
    expect(resumeRun(every, 90_500)).toBe(91_000)
    expect(resumeRun(every, 91_000)).toBe(91_000)
  })

  it('starts a cron schedule at its next occurrence', () => {
    const timing: CronTiming = { kind: 'cron', cron: '0 * * * *', timezone: 'UTC' }
    expect(firstRun(timing, at('2026-01-01T00:30:00Z'))).toBe(at('2026-01-01T01:00:00Z'))
    expect(firstRun(timing, at('2026-01-01T01:00:00Z'))).toBe(at('2026-01-01T01:00:00Z'))
  })
})
