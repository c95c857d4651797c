import { createBroker, IddqueueError, InvalidOptionError } from '@iddqueue/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ResultMissing, ResultTimeout, results } from '../src/index.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

// Hostile options to results() and message.result(): refused with
// InvalidOptionError naming the option (never a TypeError), before any SQL
// (the results table stays as it was); valid ones accepted. Assertions name
// the error class and the option, never a whole message text.

/** No PostgreSQL listens there: only a check that runs before connecting can answer. */
const UNREACHABLE = 'postgres://nobody@127.0.0.1:1/none'

const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    "'; drop table iddqueue.results; --",
    '\u0000',
    '\ud800',
    'q'.repeat(10_000),
    '1',
  ),
)

/**
 * Values of the wrong type, including objects without a prototype (on which
 * `String()` throws) and bigints (on which `JSON.stringify` throws).
 */
const wrongType = fc.oneof(
  hostileString,
  fc.constant(null),
  fc.bigInt(),
  fc.constantFrom(Symbol('s'), () => 1, new Date(0), [], [1], {}),
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

/** Anything but a safe integer of at least `min` (undefined means the default). */
const notIntegerFrom = (min: number) =>
  fc.oneof(badNumber, wrongType, fc.boolean(), safeInt(Number.MIN_SAFE_INTEGER, min - 1))

const notBoolean = fc.oneof(wrongType, badNumber, fc.integer())

function thrown(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('expected the call to throw')
}

function expectRefused(error: unknown, mention: string): void {
  expect(InvalidOptionError.isInstance(error), `${String(error)}\n${(error as Error)?.stack}`).toBe(
    true,
  )
  expect((error as Error).message).toContain(mention)
}

async function resultRowCount(): Promise<number> {
  const [row] = await db.sql`select count(*)::int as n from iddqueue.results`
  return row?.n as number
}

describe('results() options, under random values', () => {
  it('refuses a bad storeResults, resultTtlMs, pollIntervalMs or purgeIntervalMs, naming it', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          notBoolean.map((v) => ['storeResults', v] as const),
          notIntegerFrom(1).map((v) => ['resultTtlMs', v] as const),
          // The intervals arm Node timers, which fire at once past 2^31 - 1 ms.
          fc.oneof(notIntegerFrom(1), safeInt(2 ** 31)).map((v) => ['pollIntervalMs', v] as const),
          fc
            .oneof(notIntegerFrom(1), safeInt(2 ** 31))
            .filter((v) => v !== false)
            .map((v) => ['purgeIntervalMs', v] as const),
        ),
        ([key, value]) => {
          expectRefused(
            thrown(() => results({ [key]: value } as never)),
            key,
          )
        },
      ),
      { numRuns: 300 },
    )
  })

  it('refuses unknown keys and options that are not an object', () => {
    const known = ['storeResults', 'resultTtlMs', 'pollIntervalMs', 'purgeIntervalMs']
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((key) => !known.includes(key)),
        (key) =>
          expectRefused(
            thrown(() => results({ [key]: 1 } as never)),
            JSON.stringify(key),
          ),
      ),
      { numRuns: 100 },
    )
    fc.assert(
      fc.property(
        fc.oneof(hostileString, fc.integer(), fc.boolean(), fc.constant(null), fc.bigInt()),
        (options) =>
          expectRefused(
            thrown(() => results(options as never)),
            'results()',
          ),
      ),
      { numRuns: 100 },
    )
  })

  it('accepts every valid combination, and a broker takes the plugin', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            storeResults: fc.boolean(),
            resultTtlMs: safeInt(1),
            pollIntervalMs: safeInt(1, 2 ** 31 - 1),
            purgeIntervalMs: fc.oneof(fc.constant(false as const), safeInt(1, 2 ** 31 - 1)),
          },
          { requiredKeys: [] },
        ),
        async (options) => {
          const broker = createBroker({ url: UNREACHABLE, plugins: [results(options)] })
          // An actor without its own options takes the plugin's default.
          broker.actor('job', () => 1)
          await broker.close()
        },
      ),
      { numRuns: 100 },
    )
  })

  it('refuses bad actor options storeResults and resultTtlMs at declaration, naming them', async () => {
    const broker = createBroker({ url: UNREACHABLE, plugins: [results()] })
    fc.assert(
      fc.property(
        fc.oneof(
          notBoolean.map((v) => ({ key: 'storeResults', options: { storeResults: v } })),
          notIntegerFrom(1).map((v) => ({
            key: 'resultTtlMs',
            options: { storeResults: true, resultTtlMs: v },
          })),
          // A TTL on an actor that stores nothing would do nothing: refused too.
          safeInt(1).map((v) => ({ key: 'resultTtlMs', options: { resultTtlMs: v } })),
        ),
        ({ key, options }) => {
          expectRefused(
            thrown(() => broker.actor('job', () => 1, options as never)),
            key,
          )
        },
      ),
      { numRuns: 200 },
    )
    // Valid ones declare the actor (each under a fresh name).
    let n = 0
    fc.assert(
      fc.property(
        fc.record(
          { storeResults: fc.constant(true), resultTtlMs: safeInt(1) },
          { requiredKeys: ['storeResults'] },
        ),
        (options) => {
          const actor = broker.actor(`job_${n++}`, () => 1, options)
          expect(actor.options.storeResults).toBe(true)
        },
      ),
      { numRuns: 100 },
    )
    await broker.close()
  })
})

describe('message.result() options, under random values', () => {
  it('refuses a bad block or timeoutMs with InvalidOptionError naming it, reading nothing', async () => {
    const broker = db.broker({ plugins: [results()] })
    const job = broker.actor('job', () => 1, { queue: uniqueQueue('res'), storeResults: true })
    const message = await job.send()
    const rows = await resultRowCount()
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          notBoolean.map((v) => ['block', v] as const),
          fc
            .oneof(badNumber, wrongType, fc.boolean(), safeInt(Number.MIN_SAFE_INTEGER, -1))
            .map((v) => ['timeoutMs', v] as const),
        ),
        async ([key, value]) => {
          const started = performance.now()
          let error: unknown
          try {
            await message.result({ [key]: value } as never)
          } catch (caught) {
            error = caught
          }
          expectRefused(error, key)
          // Refused at once, not after waiting out a timeout.
          expect(performance.now() - started).toBeLessThan(1_000)
        },
      ),
      { numRuns: 100 },
    )
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(hostileString, fc.integer(), fc.boolean(), fc.constant(null), fc.bigInt()),
        async (options) => {
          let error: unknown
          try {
            await message.result(options as never)
          } catch (caught) {
            error = caught
          }
          expectRefused(error, 'result()')
        },
      ),
      { numRuns: 50 },
    )
    expect(await resultRowCount()).toBe(rows)
  }, 60_000)

  it('accepts valid options: an unfinished message is missing, or times out, with a typed error', async () => {
    const broker = db.broker({ plugins: [results()] })
    const job = broker.actor('job', () => 1, { queue: uniqueQueue('res'), storeResults: true })
    const message = await job.send()
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.record(
            { block: fc.constant(false), timeoutMs: safeInt(0) },
            { requiredKeys: ['block'] },
          ),
          fc.record(
            { block: fc.constant(true), timeoutMs: fc.integer({ min: 0, max: 30 }) },
            { requiredKeys: ['timeoutMs'] },
          ),
        ),
        async (options) => {
          let error: unknown
          try {
            await message.result(options)
          } catch (caught) {
            error = caught
          }
          expect(IddqueueError.isInstance(error), String(error)).toBe(true)
          if (options.block === false) expect(ResultMissing.isInstance(error)).toBe(true)
          else expect(ResultTimeout.isInstance(error)).toBe(true)
        },
      ),
      { numRuns: 40 },
    )
  }, 60_000)
})

describe('purgeResults() options, under random values', () => {
  it('refuses a bad batchSize or options that are not an object, deleting nothing', async () => {
    const plugin = results({ purgeIntervalMs: false })
    const broker = db.broker({ plugins: [plugin] })
    await broker.ready()
    const rows = await resultRowCount()
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          // null reads as absent (the default), like undefined.
          notIntegerFrom(1)
            .filter((v) => v !== null)
            .map((v) => ({ mention: 'batchSize', options: { batchSize: v } })),
          fc
            .oneof(hostileString, fc.integer(), fc.boolean(), fc.constant(null), fc.bigInt())
            .map((v) => ({ mention: 'purgeResults()', options: v })),
        ),
        async ({ mention, options }) => {
          let error: unknown
          try {
            await plugin.purgeResults(options as never)
          } catch (caught) {
            error = caught
          }
          expectRefused(error, mention)
        },
      ),
      { numRuns: 100 },
    )
    expect(await resultRowCount()).toBe(rows)
  })
})
