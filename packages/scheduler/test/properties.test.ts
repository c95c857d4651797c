import { IddqueueError, InvalidOptionError } from '@iddqueue/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MIN_TIME_MS } from '../src/definition/resolve-definition.js'
import { createScheduler, scheduler } from '../src/index.js'
import { LATEST_CRON_MS, MAX_DATE_MS } from '../src/timing/schedule-timing.js'
import { setupDatabase } from './helpers.js'

const db = setupDatabase()

// Hostile schedule definitions: every bad field is refused with
// InvalidOptionError naming the field (never a TypeError), before any SQL
// (the schedules table stays exactly as it was); valid definitions are
// stored as given. Assertions name the error class and the field, never a
// whole message text.

const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    "'; drop table iddqueue.schedules; --",
    '"',
    '\u0000',
    '\ud800',
    'q'.repeat(10_000),
  ),
)

/**
 * Values of the wrong type, including objects without a prototype (on which
 * `String()` throws) and bigints (on which `JSON.stringify` throws).
 */
const wrongType = fc.oneof(
  hostileString,
  fc.boolean(),
  fc.constant(null),
  fc.bigInt(),
  fc.constantFrom(Symbol('s'), () => 1, [], [1], {}),
  fc.constant(null).map(() => Object.create(null)),
  fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), fc.jsonValue(), { maxKeys: 3 }),
)

const badNumber = fc.oneof(
  fc.constantFrom(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    0.5,
    1e300,
    2 ** 53,
    Number.MAX_VALUE,
  ),
  fc.double().filter((x) => !Number.isInteger(x)),
)

const safeInt = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number)

let serial = 0
const unique = (label: string) => `${label}-${process.pid}-${serial++}`

async function snapshot(): Promise<string> {
  const [row] = await db.sql`select count(*)::int as n,
      coalesce(md5(string_agg(s::text, ',' order by name)), '') as digest
    from iddqueue.schedules s`
  return `${row?.n}:${row?.digest}`
}

async function rejected(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error('expected the call to reject')
}

function expectRefused(error: unknown, mention: string): void {
  expect(InvalidOptionError.isInstance(error), `${String(error)}\n${(error as Error)?.stack}`).toBe(
    true,
  )
  expect((error as Error).message).toContain(mention)
}

const badName = fc.oneof(
  fc.constantFrom(
    '',
    'n'.repeat(129),
    'a\nb',
    '\u0000',
    'tab\there',
    '\u007f',
    '\ud800',
    'x\udc00',
  ),
  fc.string({ minLength: 129, maxLength: 300 }),
  wrongType.filter((v) => typeof v !== 'string'),
)

/** Definitions with one bad field (beside a valid name, actor and timing), and the field's name. */
const badField: fc.Arbitrary<{ fields: Record<string, unknown>; mention: string }> = fc.oneof(
  fc
    .oneof(badNumber, wrongType, safeInt(Number.MIN_SAFE_INTEGER, 0))
    .map((everyMs) => ({ fields: { everyMs }, mention: 'everyMs' })),
  fc
    .oneof(
      fc.constantFrom(
        '',
        '   ',
        'every tuesday',
        '* * *',
        '61 * * * *',
        '* * * * * * * *',
        'c'.repeat(257),
      ),
      wrongType.filter((v) => typeof v !== 'string'),
    )
    .map((cron) => ({ fields: { cron }, mention: 'cron' })),
  fc
    .oneof(
      fc.constantFrom('', 'Mars/Olympus', 'Europe/Atlantis', 'z'.repeat(65), '\u0000'),
      // null reads as absent (the default, UTC), like undefined.
      wrongType.filter((v) => typeof v !== 'string' && v !== null),
    )
    .map((timezone) => ({ fields: { cron: '0 3 * * *', timezone }, mention: 'time zone' })),
  fc.constantFrom('startAt', 'endAt').chain((key) =>
    fc
      .oneof(
        fc.constantFrom(
          Number.NaN,
          Number.POSITIVE_INFINITY,
          8.64e15 + 1,
          // Before PostgreSQL's earliest timestamptz (4714-11-24 BC).
          -210_866_803_200_001,
          new Date(-8.64e15),
          new Date(Number.NaN),
          '2026-01-01T00:00:00',
          '2026-01-01',
          'tomorrow',
          '',
        ),
        wrongType.filter((v) => typeof v !== 'string'),
      )
      .map((value) => ({ fields: { everyMs: 1_000, [key]: value }, mention: key })),
  ),
  // A cron schedule starting in the last week of the Date range: croner cannot compute from there.
  safeInt(8.64e15 - 7 * 86_400_000 + 1, 8.64e15).map((startAt) => ({
    fields: { cron: '* * * * *', startAt },
    mention: 'startAt',
  })),
  fc
    .tuple(safeInt(-210_866_803_200_000 + 1e12, 8.64e15), safeInt(0, 1e12))
    .map(([start, back]) => ({
      fields: { everyMs: 1_000, startAt: start, endAt: start - back },
      mention: 'endAt',
    })),
  fc
    .oneof(
      fc.constantFrom(
        'all',
        'none',
        '',
        { max: 0 },
        { max: 1001 },
        { max: 1.5 },
        { max: 1, withinMs: 0 },
        { max: 1, extra: 1 },
        {},
      ),
      safeInt(Number.MIN_SAFE_INTEGER, 0).map((max) => ({ max })),
      badNumber.map((withinMs) => ({ max: 1, withinMs })),
      fc.bigInt().map((max) => ({ max })),
      fc.bigInt().map((withinMs) => ({ max: 1, withinMs })),
      // An object with a max may be a valid catchUp: those come from the cases above.
      wrongType.filter(
        (v) => v !== 'latest' && !(typeof v === 'object' && v !== null && 'max' in v),
      ),
    )
    .map((catchUp) => ({ fields: { everyMs: 1_000, catchUp }, mention: 'catchUp' })),
  fc
    .oneof(fc.constantFrom('Allow', 'SKIP', '', 'queue'), wrongType)
    // null reads as absent (the default, 'allow'), like undefined.
    .filter((v) => v !== 'allow' && v !== 'skip' && v !== null)
    .map((overlap) => ({ fields: { everyMs: 1_000, overlap }, mention: 'overlap' })),
  fc
    .oneof(wrongType, badNumber)
    .filter((v) => typeof v !== 'boolean')
    .map((enabled) => ({ fields: { everyMs: 1_000, enabled }, mention: 'enabled' })),
  // Both timings, or neither, or a time zone on an interval.
  fc.constant({ fields: { everyMs: 1_000, cron: '* * * * *' }, mention: 'everyMs or cron' }),
  fc.constant({ fields: {}, mention: 'everyMs or cron' }),
  fc.constant({ fields: { everyMs: 1_000, timezone: 'UTC' }, mention: 'timezone' }),
)

describe('schedule definitions, under random fields', () => {
  it('refuse a bad name before any SQL, in create() and define()', async () => {
    const schedules = createScheduler(db.broker())
    const before = await snapshot()
    await fc.assert(
      fc.asyncProperty(badName, async (name) => {
        const definition = { name, actor: 'a', everyMs: 1_000 } as never
        expectRefused(await rejected(() => schedules.create(definition)), 'schedule name')
        expectRefused(await rejected(() => schedules.define([definition])), 'schedule name')
      }),
      { numRuns: 100 },
    )
    expect(await snapshot(), 'refused definitions stored nothing').toBe(before)
  }, 60_000)

  it('refuse a bad everyMs, cron, timezone, startAt, endAt, catchUp, overlap or enabled, naming it', async () => {
    const schedules = createScheduler(db.broker())
    const before = await snapshot()
    await fc.assert(
      fc.asyncProperty(badField, async ({ fields, mention }) => {
        const definition = { name: unique('bad'), actor: 'a', ...fields } as never
        expectRefused(await rejected(() => schedules.create(definition)), mention)
        // In a batch, one bad definition refuses the whole batch.
        const batch = [{ name: unique('ok'), actor: 'a', everyMs: 1_000 }, definition]
        expectRefused(await rejected(() => schedules.define(batch)), mention)
      }),
      { numRuns: 100 },
    )
    expect(await snapshot(), 'refused definitions stored nothing').toBe(before)
  }, 60_000)

  it('random cron text and time zones are accepted or refused with InvalidOptionError, never a crash', async () => {
    const schedules = createScheduler(db.broker())
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 40 }),
          fc
            .array(
              fc.constantFrom(
                '*',
                '0',
                '5',
                '*/7',
                '1-3',
                'L',
                '?',
                'MON',
                'JAN',
                '#',
                ',',
                '60',
                '-1',
              ),
              {
                minLength: 4,
                maxLength: 7,
              },
            )
            .map((parts) => parts.join(' ')),
        ),
        fc.option(
          fc.oneof(
            fc.string({ maxLength: 30 }),
            fc.constantFrom('UTC', 'Europe/Paris', 'Etc/GMT+14'),
          ),
          {
            nil: undefined,
          },
        ),
        async (cron, timezone) => {
          const name = unique('cron')
          try {
            const info = await schedules.create({ name, actor: 'a', cron, timezone })
            expect(info.cron).toBe(cron.trim())
            await schedules.delete(name)
          } catch (error) {
            expect(
              InvalidOptionError.isInstance(error),
              `${String(error)}\n${(error as Error)?.stack}`,
            ).toBe(true)
          }
        },
      ),
      { numRuns: 100 },
    )
  }, 60_000)

  it('store every valid definition as given', async () => {
    const schedules = createScheduler(db.broker())
    const zones = Intl.supportedValuesOf('timeZone')
    // From PostgreSQL's earliest timestamptz (4714-11-24 BC) to the latest
    // start croner computes a cron schedule from (a week before the latest Date).
    const time = fc.oneof(
      safeInt(MIN_TIME_MS, LATEST_CRON_MS),
      fc.date({ min: new Date(MIN_TIME_MS), max: new Date(LATEST_CRON_MS), noInvalidDate: true }),
      fc
        .date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true })
        .map((d) => d.toISOString()),
    )
    const toMs = (v: number | Date | string) =>
      v instanceof Date ? v.getTime() : typeof v === 'string' ? Date.parse(v) : v
    await fc.assert(
      fc.asyncProperty(
        fc
          .string({ minLength: 1, maxLength: 100 })
          .filter(
            (s) =>
              s.isWellFormed() &&
              ![...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f),
          ),
        fc.oneof(
          // Intervals up to a year, anchored anywhere in time.
          fc.record({ everyMs: safeInt(1, 365 * 24 * 3_600_000) }),
          fc.record({
            cron: fc.constantFrom(
              '* * * * *',
              '0 3 * * *',
              '*/15 * * * *',
              '0 0 1 * *',
              '0 9 * * MON-FRI',
              '30 * * * * *',
            ),
            timezone: fc.constantFrom(...zones),
          }),
        ),
        fc.record(
          {
            startAt: time,
            catchUp: fc.oneof(
              fc.constant('latest' as const),
              fc.record(
                { max: fc.integer({ min: 1, max: 1000 }), withinMs: safeInt(1) },
                { requiredKeys: ['max'] },
              ),
            ),
            overlap: fc.constantFrom('allow' as const, 'skip' as const),
            enabled: fc.boolean(),
            priority: fc.integer({ min: -2_147_483_647, max: 2_147_483_647 }),
          },
          { requiredKeys: [] },
        ),
        async (label, timing, rest) => {
          const name = `${label}-${serial++}`
          const info = await schedules.create({ name, actor: 'a', ...timing, ...rest })
          expect(info.name).toBe(name)
          if ('everyMs' in timing) expect(info.everyMs).toBe(timing.everyMs)
          else {
            expect(info.cron).toBe(timing.cron)
            expect(info.timezone).toBe(timing.timezone)
          }
          if (rest.startAt !== undefined)
            expect(info.startAt?.getTime()).toBe(Math.trunc(toMs(rest.startAt)))
          if (rest.overlap !== undefined) expect(info.overlap).toBe(rest.overlap)
          if (rest.enabled !== undefined) expect(info.enabled).toBe(rest.enabled)
          if (rest.priority !== undefined) expect(info.priority).toBe(rest.priority)
          expect(await schedules.delete(name)).toBe(true)
        },
      ),
      { numRuns: 60 },
    )
  }, 60_000)

  it('never throws anything but an IddqueueError for random definitions', async () => {
    const schedules = createScheduler(db.broker())
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            name: fc.oneof(fc.string({ maxLength: 10 }), badName),
            actor: fc.oneof(fc.constant('a'), hostileString),
            everyMs: fc.oneof(safeInt(1, 1e9), badNumber, wrongType),
            cron: fc.oneof(fc.constant('* * * * *'), hostileString),
            timezone: fc.oneof(fc.constant('UTC'), hostileString),
            overlap: fc.oneof(fc.constant('skip'), wrongType),
          },
          { requiredKeys: ['name'] },
        ),
        async (definition) => {
          try {
            const info = await schedules.create(definition as never)
            await schedules.delete(info.name)
          } catch (error) {
            expect(
              IddqueueError.isInstance(error),
              `${String(error)}\n${(error as Error)?.stack}`,
            ).toBe(true)
          }
        },
      ),
      { numRuns: 100 },
    )
  }, 60_000)

  it('reads every instant back exactly, before 1970 too', async () => {
    const schedules = createScheduler(db.broker())
    // Before 1970 a float epoch a hair above a whole ms, truncated toward
    // zero, read back 1 ms late; beyond about 2,280 years from 1970 the
    // write itself landed off the ms.
    const instant = fc.oneof(
      safeInt(MIN_TIME_MS, -1),
      safeInt(MIN_TIME_MS, MAX_DATE_MS - 1),
      fc.constantFrom(MIN_TIME_MS, -1, -999, -1_001, -86_400_001, -62_135_596_800_001, 0),
    )
    await fc.assert(
      fc.asyncProperty(instant, safeInt(1, 1e15), async (startAt, span) => {
        const endAt = Math.min(startAt + span, MAX_DATE_MS)
        const name = unique('instant')
        const info = await schedules.create({ name, actor: 'a', everyMs: 1_000, startAt, endAt })
        expect(info.startAt?.getTime()).toBe(startAt)
        expect(info.endAt?.getTime()).toBe(endAt)
        // A new interval schedule is due at its start.
        expect(info.nextRunAt?.getTime()).toBe(startAt)
        expect((await schedules.get(name))?.startAt?.getTime()).toBe(startAt)
        expect(await schedules.delete(name)).toBe(true)
      }),
      { numRuns: 100 },
    )
  }, 60_000)
})

describe('scheduler options, under random values', () => {
  /** Anything but an object (undefined means the defaults). */
  const notObject = fc.oneof(
    hostileString,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.bigInt(),
  )
  const notPositive = fc.oneof(badNumber, wrongType, safeInt(Number.MIN_SAFE_INTEGER, 0))

  it('createScheduler(), define(), nextRuns(), tick() and update() refuse bad options before any SQL', async () => {
    const broker = db.broker()
    const schedules = createScheduler(broker)
    const name = unique('opts')
    await schedules.create({ name, actor: 'a', everyMs: 60_000 })
    const before = await snapshot()
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          notObject.map((v) => ({
            mention: 'createScheduler',
            run: () => createScheduler(broker, v as never),
          })),
          notPositive
            .filter((v) => v !== null)
            .map((v) => ({
              mention: 'maxPayloadBytes',
              run: () => createScheduler(broker, { maxPayloadBytes: v as never }),
            })),
          notObject.map((v) => ({
            mention: 'define',
            run: () => schedules.define([], v as never),
          })),
          wrongType
            .filter((v) => typeof v !== 'boolean' && v !== null)
            .map((v) => ({
              mention: 'prune',
              run: () => schedules.define([], { prune: v as never }),
            })),
          fc
            .oneof(notPositive, safeInt(1_001))
            .map((v) => ({ mention: 'count', run: () => schedules.nextRuns(name, v as never) })),
          notObject.map((v) => ({ mention: 'tick', run: () => schedules.tick(v as never) })),
          notPositive
            .filter((v) => v !== null)
            .map((v) => ({ mention: 'limit', run: () => schedules.tick({ limit: v as never }) })),
          notObject
            .filter((v) => v !== null)
            .map((v) => ({ mention: 'changes', run: () => schedules.update(name, v as never) })),
        ),
        async ({ mention, run }) => {
          expectRefused(await rejected(async () => run()), mention)
        },
      ),
      { numRuns: 200 },
    )
    expect(await snapshot(), 'refused calls stored nothing').toBe(before)
  }, 60_000)

  it('start() and scheduler() refuse bad loop options at once, starting nothing', async () => {
    const broker = db.broker()
    const schedules = createScheduler(broker)
    fc.assert(
      fc.property(
        fc.oneof(
          notObject.map((v) => ({ mention: 'start', run: () => schedules.start(v as never) })),
          fc.constantFrom('limit', 'safetyPollMs', 'pollIntervalMs').chain((key) =>
            fc
              .oneof(notPositive, safeInt(2 ** 31))
              .filter((v) => v !== null)
              .map((v) => ({ mention: key, run: () => schedules.start({ [key]: v } as never) })),
          ),
          wrongType
            .filter((v) => typeof v !== 'function' && v !== null)
            .map((v) => ({
              mention: 'onTick',
              run: () => schedules.start({ onTick: v as never }),
            })),
          notObject.map((v) => ({ mention: 'scheduler', run: () => scheduler(v as never) })),
          wrongType
            .filter((v) => typeof v !== 'boolean' && typeof v !== 'object' && v !== undefined)
            .map((v) => ({
              mention: 'runInWorkers',
              run: () => scheduler({ runInWorkers: v as never }),
            })),
          fc.constantFrom('limit', 'safetyPollMs', 'pollIntervalMs').chain((key) =>
            fc
              .oneof(notPositive, safeInt(2 ** 31))
              .filter((v) => v !== null)
              .map((v) => ({
                mention: key,
                run: () => scheduler({ runInWorkers: { [key]: v } as never }),
              })),
          ),
        ),
        ({ mention, run }) => {
          let error: unknown
          try {
            const started = run() as { stop?: () => Promise<void> }
            // A loop that started anyway must not outlive the test.
            void started?.stop?.()
          } catch (caught) {
            error = caught
          }
          expectRefused(error, mention)
        },
      ),
      { numRuns: 200 },
    )
  })
})
