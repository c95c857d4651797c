import { IddqueueError, InvalidOptionError, PayloadTooLargeError } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { resolveDefinition } from './resolve-definition.js'
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
