import { IddqueueError, InvalidOptionError, PayloadTooLargeError } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { LATEST_CRON_MS } from '../timing/schedule-timing.js'
import { MIN_TIME_MS, resolveDefinition } from './resolve-definition.js'
import type { ScheduleDefinition } from './schedule-definition.js'

const defaults = () => ({ queue: 'default', priority: 0 })
const resolve = (d: Partial<ScheduleDefinition> & Record<string, unknown>) =>
  resolveDefinition(
    { name: 's', actor: 'a', everyMs: 1_000, ...d } as ScheduleDefinition,
    defaults,
    1_024,
  )

function refusal(d: Record<string, unknown>): Error {
  try {
    resolve(d)
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a refusal')
}

describe('resolveDefinition', () => {
  it.each([
    [{ everyMs: undefined, cron: 'not a cron' }, 'not a cron'],
    [{ everyMs: undefined, cron: '61 * * * *' }, '61 * * * *'],
    [{ everyMs: undefined, cron: '0 3 * * *', timezone: 'Mars/Olympus' }, 'Mars/Olympus'],
    [{ everyMs: 0 }, 'everyMs 0'],
    [{ everyMs: -5 }, 'everyMs -5'],
    [{ everyMs: Number.NaN }, 'everyMs NaN'],
    [{ everyMs: 1.5 }, 'everyMs 1.5'],
    [{ startAt: '2026-01-02T00:00:00Z', endAt: '2026-01-01T00:00:00Z' }, 'endAt 2026-01-01'],
    [{ startAt: '2026-01-02 09:00' }, 'startAt "2026-01-02 09:00"'],
    [{ queue: 'bad queue' }, '"bad queue"'],
    [{ actor: 'bad actor' }, '"bad actor"'],
    [{ catchUp: { max: 0 } }, 'catchUp'],
    [{ overlap: 'never' }, '"never"'],
    [{ everyMs: 1_000, cron: '* * * * *' }, 'exactly one'],
    [{ everyMs: 1_000, timezone: 'UTC' }, 'timezone'],
    [{ colour: 'red' }, 'colour'],
    [{ name: '' }, 'schedule name ""'],
  ])('refuses %j naming the value', (input, named) => {
    const error = refusal(input)
    expect(InvalidOptionError.isInstance(error) || IddqueueError.isInstance(error)).toBe(true)
    expect(error.message).toContain(named)
  })

  // String() throws on an object without a prototype and JSON.stringify on a
  // bigint, even inside an object: the refusal must still be InvalidOptionError.
  it.each([
    [
      { name: 1n },
      'Invalid schedule name 1n: expected 1 to 128 characters without control characters',
    ],
    [
      { everyMs: Object.create(null) },
      'Schedule "s": invalid everyMs an object: expected a positive integer of milliseconds',
    ],
    [
      { startAt: Object.create(null) },
      'Schedule "s": invalid startAt an object: expected a Date, epoch milliseconds, or an ISO 8601 time with a zone (2026-01-01T09:00:00Z)',
    ],
    // Date's getTime throws on an object that only inherits from Date.prototype.
    [
      { startAt: Object.create(Date.prototype) },
      'Schedule "s": invalid startAt an object: expected a Date, epoch milliseconds, or an ISO 8601 time with a zone (2026-01-01T09:00:00Z)',
    ],
    [
      { endAt: 5n },
      'Schedule "s": invalid endAt 5n: expected a Date, epoch milliseconds, or an ISO 8601 time with a zone (2026-01-01T09:00:00Z)',
    ],
    [
      { catchUp: { max: 1n } },
      'Schedule "s": invalid catchUp an object: expected \'latest\' or { max: 1..1000, withinMs?: a positive integer }',
    ],
    [
      { catchUp: 2n },
      'Schedule "s": invalid catchUp 2n: expected \'latest\' or { max: 1..1000, withinMs?: a positive integer }',
    ],
    [
      { enabled: Object.create(null) },
      'Schedule "s": invalid enabled an object: expected true or false',
    ],
    [
      { overlap: Symbol('o') },
      "Schedule \"s\": invalid overlap a symbol: expected 'allow' or 'skip'",
    ],
    [
      { everyMs: undefined, cron: 1n },
      'Schedule "s": invalid cron 1n: expected a cron expression such as \'0 3 * * *\'',
    ],
    [
      { priority: Object.create(null) },
      'Schedule "s": invalid priority an object: expected an integer from -2147483647 to 2147483647',
    ],
  ])('names any value: %o', (input, text) => {
    const error = refusal(input)
    expect(error).toBeInstanceOf(InvalidOptionError)
    expect(error.message).toBe(text)
  })

  it('refuses a definition that is not an object, naming it', () => {
    for (const [definition, text] of [
      [1n, 'Invalid schedule 1n: expected an object'],
      [Symbol('d'), 'Invalid schedule a symbol: expected an object'],
    ] as const) {
      let error: unknown
      try {
        resolveDefinition(definition as never, defaults, 1_024)
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(InvalidOptionError)
      expect((error as Error).message).toBe(text)
    }
  })

  it('refuses times PostgreSQL cannot store, and a cron start croner cannot compute from', () => {
    const cron = { everyMs: undefined, cron: '* * * * *' }
    const cases: [Record<string, unknown>, string][] = [
      [
        { startAt: MIN_TIME_MS - 1 },
        'Schedule "s": invalid startAt -004713-11-23T23:59:59.999Z: expected a time from -004713-11-24T00:00:00.000Z (PostgreSQL\'s earliest) to +275760-09-13T00:00:00.000Z',
      ],
      [
        { endAt: new Date(-8.64e15) },
        'Schedule "s": invalid endAt -271821-04-20T00:00:00.000Z: expected a time from -004713-11-24T00:00:00.000Z (PostgreSQL\'s earliest) to +275760-09-13T00:00:00.000Z',
      ],
      // croner threw a RangeError here, out of create().
      [
        { ...cron, startAt: 8.64e15 },
        'Schedule "s": invalid startAt +275760-09-13T00:00:00.000Z: a cron schedule starts at the latest at +275760-09-06T00:00:00.000Z (its occurrences are not computed past it)',
      ],
      [
        { ...cron, startAt: LATEST_CRON_MS + 1 },
        'Schedule "s": invalid startAt +275760-09-06T00:00:00.001Z: a cron schedule starts at the latest at +275760-09-06T00:00:00.000Z (its occurrences are not computed past it)',
      ],
    ]
    for (const [input, text] of cases) {
      const error = refusal(input)
      expect(error).toBeInstanceOf(InvalidOptionError)
      expect(error.message).toBe(text)
    }
    // The bounds themselves are taken.
    expect(resolve({ startAt: MIN_TIME_MS, endAt: 8.64e15 })).toMatchObject({
      startAtMs: MIN_TIME_MS,
      endAtMs: 8.64e15,
    })
    expect(resolve({ ...cron, startAt: LATEST_CRON_MS }).startAtMs).toBe(LATEST_CRON_MS)
    expect(resolve({ everyMs: Number.MAX_SAFE_INTEGER, startAt: 8.64e15 }).startAtMs).toBe(8.64e15)
  })

  it('refuses oversized and non-JSON args with typed errors', () => {
    expect(PayloadTooLargeError.isInstance(refusal({ args: ['x'.repeat(2_000)] }))).toBe(true)
    expect(IddqueueError.isInstance(refusal({ args: [new Date()] }))).toBe(true)
  })

  it('fills defaults and gives the same hash to the same definition', () => {
    const a = resolve({ cron: '0 3 * * *', everyMs: undefined })
    expect(a).toMatchObject({
      queue: 'default',
      priority: 0,
      timezone: 'UTC',
      catchUp: 'latest',
      overlap: 'allow',
      enabled: true,
    })
    expect(resolve({ cron: '0 3 * * *', everyMs: undefined }).hash).toBe(a.hash)
    expect(resolve({ cron: '0 4 * * *', everyMs: undefined }).hash).not.toBe(a.hash)
  })
})
