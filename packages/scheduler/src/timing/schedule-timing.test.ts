import { describe, expect, it } from 'vitest'
import { upcomingRuns } from './plan-tick.js'
import {
  type CronTiming,
  LATEST_CRON_MS,
  MAX_DATE_MS,
  occurrenceAfter,
  occurrencesWithin,
} from './schedule-timing.js'

const DAY_MS = 86_400_000

const iso = (ms: number[]) => ms.map((t) => new Date(t).toISOString())
const at = (text: string) => Date.parse(text)
const cron = (expression: string, timezone: string): CronTiming => ({
  kind: 'cron',
  cron: expression,
  timezone,
})

describe('Europe/Paris', () => {
  // 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00Z). 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00Z).
  it('runs a fixed time inside the spring gap once, at the first valid time after it', () => {
    const runs = upcomingRuns(cron('30 2 * * *', 'Europe/Paris'), at('2026-03-28T00:00:00Z'), 3)
    expect(iso(runs)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ])
  })

  it('runs a fixed time inside the autumn repeat once, at its first pass', () => {
    const runs = upcomingRuns(cron('30 2 * * *', 'Europe/Paris'), at('2026-10-24T00:00:00Z'), 3)
    expect(iso(runs)).toEqual([
      '2026-10-24T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T00:30:00.000Z', // first 02:30 (CEST), not the second (01:30Z)
      '2026-10-26T01:30:00.000Z', // 02:30 CET
    ])
  })

  it('skips the missing quarter hours of the spring gap', () => {
    const runs = upcomingRuns(cron('*/15 * * * *', 'Europe/Paris'), at('2026-03-29T00:30:00Z'), 5)
    // 01:30, 01:45 CET, then straight to 03:00 CEST: 00:30Z, 00:45Z, 01:00Z, ... every 15 real minutes.
    expect(iso(runs)).toEqual([
      '2026-03-29T00:30:00.000Z',
      '2026-03-29T00:45:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-29T01:15:00.000Z',
      '2026-03-29T01:30:00.000Z',
    ])
  })

  it('runs every quarter hour of the autumn repeat, both passes, none doubled', () => {
    const runs = upcomingRuns(cron('*/15 * * * *', 'Europe/Paris'), at('2026-10-24T23:45:00Z'), 10)
    expect(iso(runs)).toEqual([
      '2026-10-24T23:45:00.000Z', // 01:45 CEST
      '2026-10-25T00:00:00.000Z', // 02:00 CEST (first pass)
      '2026-10-25T00:15:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-25T00:45:00.000Z',
      '2026-10-25T01:00:00.000Z', // 02:00 CET (second pass)
      '2026-10-25T01:15:00.000Z',
      '2026-10-25T01:30:00.000Z',
      '2026-10-25T01:45:00.000Z',
      '2026-10-25T02:00:00.000Z', // 03:00 CET
    ])
    expect(new Set(runs).size).toBe(runs.length)
  })
})

describe('America/New_York', () => {
  // 2026-03-08: 02:00 EST becomes 03:00 EDT (07:00Z). 2026-11-01: 02:00 EDT becomes 01:00 EST (06:00Z).
  it('runs a fixed time inside the spring gap at 03:00 EDT', () => {
    const runs = upcomingRuns(cron('30 2 * * *', 'America/New_York'), at('2026-03-07T12:00:00Z'), 3)
    expect(iso(runs)).toEqual([
      '2026-03-08T07:00:00.000Z', // 02:30 does not exist: 03:00 EDT
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
      '2026-03-10T06:30:00.000Z',
    ])
  })

  it('runs a fixed time inside the autumn repeat once (01:30 EDT)', () => {
    const runs = upcomingRuns(cron('30 1 * * *', 'America/New_York'), at('2026-10-31T12:00:00Z'), 3)
    expect(iso(runs)).toEqual([
      '2026-11-01T05:30:00.000Z', // first 01:30 (EDT); not 06:30Z (01:30 EST)
      '2026-11-02T06:30:00.000Z',
      '2026-11-03T06:30:00.000Z',
    ])
  })

  it('runs every quarter hour through both passes of the repeated hour', () => {
    const runs = upcomingRuns(
      cron('*/15 * * * *', 'America/New_York'),
      at('2026-11-01T05:00:00Z'),
      9,
    )
    expect(iso(runs)).toEqual([
      '2026-11-01T05:00:00.000Z', // 01:00 EDT
      '2026-11-01T05:15:00.000Z',
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T05:45:00.000Z',
      '2026-11-01T06:00:00.000Z', // 01:00 EST
      '2026-11-01T06:15:00.000Z',
      '2026-11-01T06:30:00.000Z',
      '2026-11-01T06:45:00.000Z',
      '2026-11-01T07:00:00.000Z', // 02:00 EST
    ])
  })

  it('skips the missing quarter hours of the spring gap', () => {
    const runs = upcomingRuns(
      cron('*/15 * * * *', 'America/New_York'),
      at('2026-03-08T06:45:00Z'),
      3,
    )
    expect(iso(runs)).toEqual([
      '2026-03-08T06:45:00.000Z', // 01:45 EST
      '2026-03-08T07:00:00.000Z', // 03:00 EDT
      '2026-03-08T07:15:00.000Z',
    ])
  })
})

describe('interval and window', () => {
  const every = { kind: 'interval', everyMs: 1_000, anchorMs: 500 } as const

  it('stays on the grid of its anchor', () => {
    expect(occurrenceAfter(every, 0)).toBe(500)
    expect(occurrenceAfter(every, 500)).toBe(1_500)
    expect(occurrenceAfter(every, 1_499)).toBe(1_500)
  })

  it('has no occurrence at or after endAt', () => {
    expect(occurrenceAfter({ ...every, endAtMs: 2_500 }, 1_500)).toBeNull()
    expect(upcomingRuns({ ...every, endAtMs: 3_000 }, 0, 10)).toEqual([500, 1_500, 2_500])
  })

  it('lists the most recent occurrences of a window, oldest first', () => {
    expect(occurrencesWithin(every, 0, 10_000, 3)).toEqual([7_500, 8_500, 9_500])
    expect(
      occurrencesWithin(
        cron('* * * * *', 'UTC'),
        at('2026-01-01T00:00:00Z'),
        at('2026-01-01T00:10:30Z'),
        2,
      ),
    ).toEqual([at('2026-01-01T00:09:00Z'), at('2026-01-01T00:10:00Z')])
  })

  it('starts a cron schedule no earlier than startAt', () => {
    const timing = { ...cron('0 * * * *', 'UTC'), startAtMs: at('2026-01-01T05:00:00Z') }
    expect(iso(upcomingRuns(timing, at('2026-01-01T00:00:00Z'), 2))).toEqual([
      '2026-01-01T05:00:00.000Z',
      '2026-01-01T06:00:00.000Z',
    ])
  })
})

describe('the end of time', () => {
  // croner throws a RangeError once local time passes the latest Date; an
  // interval can step past it. Neither may escape: there is no occurrence there.
  const zones = ['UTC', 'Pacific/Kiritimati', 'Etc/GMT+12', 'Australia/Lord_Howe', 'Asia/Kathmandu']
  const patterns = ['* * * * *', '30 * * * * *', '0 3 * * *', '0 0 1 1 *']

  it('has no cron occurrence after LATEST_CRON_MS, and never throws near the latest Date', () => {
    for (const timezone of zones) {
      for (const pattern of patterns) {
        const timing = cron(pattern, timezone)
        for (
          let afterMs = LATEST_CRON_MS - 2 * DAY_MS;
          afterMs <= MAX_DATE_MS;
          afterMs += 6 * 3_600_000
        ) {
          const next = occurrenceAfter(timing, afterMs)
          if (next !== null) expect(next).toBeLessThanOrEqual(LATEST_CRON_MS)
          expect(() => occurrencesWithin(timing, afterMs - DAY_MS, afterMs, 3)).not.toThrow()
        }
        const runs = upcomingRuns({ ...timing, startAtMs: LATEST_CRON_MS - DAY_MS }, 0, 1_000)
        expect(runs.at(-1) ?? 0).toBeLessThanOrEqual(LATEST_CRON_MS)
      }
    }
  })

  it('has no interval occurrence after the latest Date, however long everyMs is', () => {
    const timing = { kind: 'interval', everyMs: Number.MAX_SAFE_INTEGER, anchorMs: 0 } as const
    expect(occurrenceAfter(timing, -1)).toBe(0)
    expect(occurrenceAfter(timing, 0)).toBeNull()
    const late = { kind: 'interval', everyMs: DAY_MS, anchorMs: MAX_DATE_MS - 2 * DAY_MS } as const
    expect(upcomingRuns(late, 0, 10)).toEqual([
      MAX_DATE_MS - 2 * DAY_MS,
      MAX_DATE_MS - DAY_MS,
      MAX_DATE_MS,
    ])
    expect(occurrencesWithin(late, 0, Number.MAX_SAFE_INTEGER, 5)).toEqual([
      MAX_DATE_MS - 2 * DAY_MS,
      MAX_DATE_MS - DAY_MS,
      MAX_DATE_MS,
    ])
  })
})
