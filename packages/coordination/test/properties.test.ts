import { type Broker, InvalidIdentifierError, InvalidOptionError } from '@iddqueue/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { coordination, RateLimitExceeded, RateLimited } from '../src/index.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

// Hostile options to the limiters, setLimit and groups: refused with a
// typed error naming the option, before any SQL (the coordination tables
// and the messages table stay exactly as they were); valid ones accepted.
// Assertions name the error class and the option, never a whole message.

type ErrorClass = typeof InvalidOptionError | typeof InvalidIdentifierError

const INT4_MAX = 2_147_483_647

const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom("'; drop table iddqueue.coordination_limits; --", '"', '\ud800', '1', ' '),
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

/** Anything but an integer from `min` to `max`. */
const notIntegerIn = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  fc.oneof(
    badNumber,
    wrongType,
    safeInt(Number.MIN_SAFE_INTEGER, min - 1),
    ...(max < Number.MAX_SAFE_INTEGER ? [safeInt(max + 1)] : []),
  )

/** Keys no limiter takes: empty, too long, with NUL or an unpaired surrogate, not strings. */
const badKey = fc.oneof(
  fc.constantFrom('', 'k'.repeat(513), '\u0000', 'a\u0000b', '\ud800', 'a\udc00', '\ude00\ud83d'),
  fc.string({ minLength: 513, maxLength: 600 }),
  // An ASCII string around one lone surrogate: nothing can pair with it.
  fc
    .tuple(fc.string({ maxLength: 40 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string())
    .map(([before, unit, after]) => `${before}${String.fromCharCode(unit)}${after}`),
  wrongType.filter((v) => typeof v !== 'string'),
)

/** At most 256 code points, so at most 512 UTF-16 units; astral characters come as pairs. */
const validKey = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 256 })
  .filter((k) => !k.includes('\u0000'))

function thrown(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('expected the call to throw')
}

async function rejected(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error('expected the call to reject')
}

function expectRefused(error: unknown, errorClass: ErrorClass, mention: string): void {
  expect(errorClass.isInstance(error), `${String(error)}\n${(error as Error)?.stack}`).toBe(true)
  expect((error as Error).message).toContain(mention)
}

/** The rows of every table a refused call could have written to, as text. */
async function snapshot(): Promise<string> {
  const rows = await db.sql`select
      (select count(*) from iddqueue.messages)::int as messages,
      (select coalesce(md5(string_agg(l::text, ',' order by scope, name)), '') from iddqueue.coordination_limits l) as limits,
      (select coalesce(md5(string_agg(g::text, ',' order by id)), '') from iddqueue.coordination_groups g) as groups,
      (select count(*) from iddqueue.coordination_slots)::int as slots,
      (select count(*) from iddqueue.coordination_buckets)::int as buckets,
      (select count(*) from iddqueue.coordination_hits)::int as hits`
  return JSON.stringify(rows[0])
}

async function ready(): Promise<{ coord: ReturnType<typeof coordination>; broker: Broker }> {
  const coord = coordination({ purgeIntervalMs: false })
  const broker = db.broker({ plugins: [coord] })
  await broker.ready()
  return { coord, broker }
}

const LIMITERS = [
  ['concurrentLimiter', 'ttlMs'],
  ['bucketLimiter', 'bucketMs'],
  ['windowLimiter', 'windowMs'],
] as const

describe('limiters, under random keys and options', () => {
  it('refuse a bad key, limit or period with InvalidOptionError naming it', () => {
    const coord = coordination({ purgeIntervalMs: false })
    fc.assert(
      fc.property(
        fc.constantFrom(...LIMITERS),
        fc.oneof(
          badKey.map((v) => ({ bad: 'key', key: v, limit: 1, period: 1_000 })),
          notIntegerIn(1, INT4_MAX).map((v) => ({
            bad: 'limit',
            key: 'k',
            limit: v,
            period: 1_000,
          })),
          notIntegerIn(1).map((v) => ({ bad: 'period', key: 'k', limit: 1, period: v })),
        ),
        ([kind, periodName], { bad, key, limit, period }) => {
          const error = thrown(() =>
            coord[kind](key as string, { limit, [periodName]: period } as never),
          )
          expectRefused(error, InvalidOptionError, bad === 'period' ? periodName : bad)
        },
      ),
      { numRuns: 300 },
    )
    fc.assert(
      fc.property(
        fc.constantFrom(...LIMITERS),
        fc.oneof(hostileString, fc.integer(), fc.constant(null), fc.bigInt()),
        ([kind], options) => {
          expectRefused(
            thrown(() => coord[kind]('k', options as never)),
            InvalidOptionError,
            kind,
          )
        },
      ),
      { numRuns: 100 },
    )
  })

  it('accept every valid key, limit and period', () => {
    const coord = coordination({ purgeIntervalMs: false })
    fc.assert(
      fc.property(
        fc.constantFrom(...LIMITERS),
        validKey,
        safeInt(1, INT4_MAX),
        safeInt(1),
        ([kind, periodName], key, limit, period) => {
          const limiter = coord[kind](key, { limit, [periodName]: period } as never)
          expect(limiter.key).toBe(key)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('acquire() refuses a bad waitMs before any SQL; a valid one is honoured', async () => {
    const { coord } = await ready()
    const before = await snapshot()
    const limiter = coord.concurrentLimiter(uniqueQueue('lim'), { limit: 1, ttlMs: 60_000 })
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          notIntegerIn(0).map((waitMs) => ({ waitMs })),
          fc.oneof(hostileString, fc.integer(), fc.constant(null)),
        ),
        async (options) => {
          const error = await rejected(() => limiter.acquire(options as never))
          expectRefused(
            error,
            InvalidOptionError,
            typeof options === 'object' && options !== null ? 'waitMs' : 'acquire()',
          )
        },
      ),
      { numRuns: 100 },
    )
    expect(await snapshot(), 'refused acquires wrote nothing').toBe(before)
    // Valid waits: the first lease is granted, a second waits its waitMs then is refused.
    const held = await limiter.acquire()
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 20 }), async (waitMs) => {
        const error = await rejected(() => limiter.acquire({ waitMs }))
        expect(RateLimitExceeded.isInstance(error), String(error)).toBe(true)
      }),
      { numRuns: 20 },
    )
    await held.release()
  }, 60_000)
})

describe('setLimit, under random targets and values', () => {
  it('refuses a bad target or value with a typed error naming it, and stores nothing', async () => {
    const { coord } = await ready()
    const before = await snapshot()
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          // Targets: a bad queue name, a bad key or actor, several or unknown scopes.
          fc
            .oneof(hostileString, fc.constantFrom('', 'bad queue!', '-q', 'q'.repeat(129)))
            .filter((q) => typeof q !== 'string' || !/^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$/.test(q))
            .map((q) => ({
              target: { queue: q },
              values: { concurrency: 1 },
              errorClass: InvalidIdentifierError as ErrorClass,
              mention: 'queue',
            })),
          fc.constantFrom('key', 'actor').chain((scope) =>
            badKey.map((name) => ({
              target: { [scope]: name },
              values: { concurrency: 1 },
              errorClass: InvalidOptionError as ErrorClass,
              mention: `limit ${scope} key`,
            })),
          ),
          fc
            .uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 0, maxLength: 3 })
            .filter((keys) => keys.length !== 1 || !['queue', 'actor', 'key'].includes(keys[0]!))
            .map((keys) => ({
              target: Object.fromEntries(keys.map((k) => [k, 'x'])),
              values: { concurrency: 1 },
              errorClass: InvalidOptionError as ErrorClass,
              mention: 'target',
            })),
          // Values.
          notIntegerIn(1, INT4_MAX)
            .filter((v) => v !== null)
            .map((v) => ({
              target: { key: 'k' },
              values: { concurrency: v },
              errorClass: InvalidOptionError as ErrorClass,
              mention: 'concurrency',
            })),
          notIntegerIn(1, 10_000).map((v) => ({
            target: { key: 'k' },
            values: { rate: { limit: v, periodMs: 1_000 } },
            errorClass: InvalidOptionError as ErrorClass,
            mention: 'rate.limit',
          })),
          notIntegerIn(1).map((v) => ({
            target: { key: 'k' },
            values: { rate: { limit: 1, periodMs: v } },
            errorClass: InvalidOptionError as ErrorClass,
            mention: 'rate.periodMs',
          })),
          fc.oneof(hostileString, fc.integer(), fc.constant(null)).map((v) => ({
            target: { key: 'k' },
            values: v,
            errorClass: InvalidOptionError as ErrorClass,
            mention: 'values',
          })),
        ),
        async ({ target, values, errorClass, mention }) => {
          const error = await rejected(() => coord.setLimit(target as never, values as never))
          expectRefused(error, errorClass, mention)
        },
      ),
      { numRuns: 100 },
    )
    expect(await snapshot(), 'refused setLimit calls stored nothing').toBe(before)
  }, 60_000)

  it('stores every valid limit as given, and clears it with nulls', async () => {
    const { coord } = await ready()
    await fc.assert(
      fc.asyncProperty(
        validKey,
        safeInt(1, INT4_MAX),
        safeInt(1, 10_000),
        safeInt(1),
        async (key, concurrency, limit, periodMs) => {
          await coord.setLimit({ key }, { concurrency, rate: { limit, periodMs } })
          const info = (await coord.listLimits()).find((l) => l.scope === 'key' && l.name === key)
          expect(info?.concurrency).toBe(concurrency)
          expect(info?.rate).toEqual({ limit, periodMs })
          await coord.setLimit({ key }, { concurrency: null, rate: null })
          const [row] =
            await db.sql`select count(*)::int as n from iddqueue.coordination_limits where scope = 'key' and name = ${key}`
          expect(row?.n).toBe(0)
        },
      ),
      { numRuns: 50 },
    )
  }, 60_000)
})

describe('groups, under random members and run options', () => {
  it('refuse bad members at construction', async () => {
    const { coord, broker } = await ready()
    const job = broker.actor('job', () => {}, { queue: uniqueQueue('grp') })
    const one = job.message()
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constant([]),
          fc.constant([one, one]),
          wrongType.filter((v) => !Array.isArray(v) || v.length > 0),
          fc.array(wrongType, { minLength: 1, maxLength: 3 }),
        ),
        (members) => {
          expectRefused(
            thrown(() => coord.group(members as never)),
            InvalidOptionError,
            'group',
          )
        },
      ),
      { numRuns: 100 },
    )
  })

  it('group.run() refuses a bad ttlMs, delayMs, onCompletion or onFailure before any SQL', async () => {
    const { coord, broker } = await ready()
    const job = broker.actor('job', () => {}, { queue: uniqueQueue('grp') })
    const before = await snapshot()
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          notIntegerIn(1).map((v) => ({ key: 'ttlMs', options: { ttlMs: v } })),
          // A delay whose eta passes the latest Date is refused by the send: before the group row.
          fc
            .oneof(notIntegerIn(0), safeInt(8.64e15))
            .filter((v) => v !== undefined)
            .map((v) => ({ key: 'delayMs', options: { delayMs: v } })),
          wrongType
            .filter((v) => v !== undefined)
            .map((v) => ({ key: 'onCompletion', options: { onCompletion: v } })),
          wrongType
            .filter((v) => v !== undefined)
            .map((v) => ({ key: 'onFailure', options: { onFailure: v } })),
          fc
            .oneof(hostileString, fc.integer(), fc.constant(null))
            .map((v) => ({ key: 'group.run()', options: v })),
        ),
        async ({ key, options }) => {
          const group = coord.group([job.message(), job.message()])
          const error = await rejected(() => group.run(options as never))
          expectRefused(error, InvalidOptionError, key)
        },
      ),
      { numRuns: 100 },
    )
    expect(await snapshot(), 'refused groups wrote nothing').toBe(before)
  }, 60_000)

  it('group.run() accepts valid options: the group and its members are stored', async () => {
    const { coord, broker } = await ready()
    const queue = uniqueQueue('grp')
    const job = broker.actor('job', () => {}, { queue })
    const done = broker.actor('done', () => {}, { queue })
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.record(
          {
            ttlMs: safeInt(1, 100 * 365 * 24 * 3_600_000),
            delayMs: safeInt(0, 365 * 24 * 3_600_000),
            onCompletion: fc.constant(null).map(() => done.message()),
            onFailure: fc.constant(null).map(() => done.message()),
          },
          { requiredKeys: [] },
        ),
        async (size, options) => {
          const group = await coord
            .group(Array.from({ length: size }, () => job.message()))
            .run(options)
          const [row] =
            await db.sql`select count(*)::int as n from iddqueue.messages where id = any(${group.messages.map((m) => m.id)}::uuid[])`
          expect(row?.n).toBe(size)
          const [stored] =
            await db.sql`select count(*)::int as n from iddqueue.coordination_groups where id = ${group.id}`
          expect(stored?.n).toBe(1)
        },
      ),
      { numRuns: 40 },
    )
  }, 60_000)
})

describe('plugin, actor, barrier and RateLimited options, under random values', () => {
  const notObject = fc.oneof(hostileString, fc.integer(), fc.boolean(), fc.bigInt())
  const notPositive = notIntegerIn(1).filter((v) => v !== null)

  it('coordination() refuses bad options and declared limits, naming them', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          notObject.map((v) => ({ options: v, mention: 'coordination options' })),
          notPositive.map((v) => ({ options: { groupTtlMs: v }, mention: 'groupTtlMs' })),
          // The intervals arm Node timers, which fire at once past 2^31 - 1 ms.
          fc.constantFrom('pollIntervalMs', 'purgeIntervalMs').chain((key) =>
            fc
              .oneof(notPositive, safeInt(INT4_MAX + 1))
              .filter((v) => v !== false)
              .map((v) => ({ options: { [key]: v }, mention: key })),
          ),
          wrongType
            .filter((v) => !Array.isArray(v))
            .map((v) => ({ options: { limits: v }, mention: 'coordination limits' })),
          wrongType
            .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
            .map((v) => ({ options: { limits: [v] }, mention: 'coordination limit' })),
          notIntegerIn(1, INT4_MAX)
            .filter((v) => v !== undefined)
            .map((v) => ({
              options: { limits: [{ queue: 'q', concurrency: v }] },
              mention: 'concurrency',
            })),
          notIntegerIn(1, 10_000)
            .filter((v) => v !== undefined)
            .map((v) => ({
              options: { limits: [{ actor: 'a', rate: { limit: v, periodMs: 1_000 } }] },
              mention: 'rate.limit',
            })),
          badKey
            .filter((v) => v !== undefined)
            .map((v) => ({
              options: { limits: [{ actor: v, concurrency: 1 }] },
              mention: 'limit actor key',
            })),
        ),
        ({ options, mention }) => {
          expectRefused(
            thrown(() => coordination(options as never)),
            InvalidOptionError,
            mention,
          )
        },
      ),
      { numRuns: 300 },
    )
  })

  it('actor options concurrency and rate are refused at declaration, naming them', async () => {
    const { broker } = await ready()
    let n = 0
    fc.assert(
      fc.property(
        fc.oneof(
          wrongType
            .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
            .filter((v) => v !== undefined)
            .map((v) => ({ options: { concurrency: v }, mention: 'concurrency' })),
          notIntegerIn(1, INT4_MAX).map((v) => ({
            options: { concurrency: { limit: v } },
            mention: 'concurrency.limit',
          })),
          wrongType
            .filter((v) => typeof v !== 'function' && v !== undefined)
            .map((v) => ({
              options: { concurrency: { limit: 1, key: v } },
              mention: 'concurrency.key',
            })),
          wrongType
            .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
            .filter((v) => v !== undefined)
            .map((v) => ({ options: { rate: v }, mention: 'rate' })),
          notIntegerIn(1, 10_000).map((v) => ({
            options: { rate: { limit: v, periodMs: 1_000 } },
            mention: 'rate.limit',
          })),
          notIntegerIn(1).map((v) => ({
            options: { rate: { limit: 1, periodMs: v } },
            mention: 'rate.periodMs',
          })),
        ),
        ({ options, mention }) => {
          expectRefused(
            thrown(() => broker.actor(`job_${n++}`, () => {}, options as never)),
            InvalidOptionError,
            mention,
          )
        },
      ),
      { numRuns: 200 },
    )
  })

  it('a bad concurrencyKey, rateKey or computed key is refused at send, storing nothing', async () => {
    const { broker } = await ready()
    const queue = uniqueQueue('keys')
    const keyed = broker.actor('keyed', (key: unknown) => key, {
      queue,
      concurrency: { limit: 1, key: (key: unknown) => key as string },
      rate: { limit: 5, periodMs: 1_000 },
    })
    const before = await snapshot()
    await fc.assert(
      fc.asyncProperty(
        badKey.filter((v) => v !== undefined),
        fc.constantFrom('computed', 'concurrencyKey', 'rateKey'),
        async (key, how) => {
          const error = await rejected(async () =>
            how === 'computed'
              ? keyed.send(key)
              : keyed.sendWithOptions({ args: ['ok'], options: { [how]: key } }),
          )
          expectRefused(error, InvalidOptionError, how === 'rateKey' ? 'rate' : 'concurrency')
        },
      ),
      { numRuns: 100 },
    )
    expect(await snapshot(), 'refused sends stored nothing').toBe(before)
  }, 60_000)

  it('barrier(), wait(), purge() and RateLimited refuse bad options before any SQL', async () => {
    const { coord } = await ready()
    const barrier = coord.barrier(uniqueQueue('bar'), { parties: 2, ttlMs: 60_000 })
    const before = await snapshot()
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          notIntegerIn(1, INT4_MAX).map((v) => ({
            mention: 'parties',
            run: () => coord.barrier('b', { parties: v as never, ttlMs: 1_000 }),
          })),
          notIntegerIn(1).map((v) => ({
            mention: 'ttlMs',
            run: () => coord.barrier('b', { parties: 1, ttlMs: v as never }),
          })),
          notIntegerIn(0)
            .filter((v) => v !== undefined)
            .map((v) => ({
              mention: 'timeoutMs',
              run: () => barrier.wait({ timeoutMs: v as never }),
            })),
          notObject.map((v) => ({ mention: 'wait()', run: () => barrier.wait(v as never) })),
          notIntegerIn(1)
            .filter((v) => v !== undefined && v !== null)
            .map((v) => ({
              mention: 'batchSize',
              run: () => coord.purge({ batchSize: v as never }),
            })),
          notObject.map((v) => ({ mention: 'purge()', run: () => coord.purge(v as never) })),
          notIntegerIn(0)
            .filter((v) => v !== undefined)
            .map((v) => ({
              mention: 'untilMs',
              run: () => new RateLimited({ untilMs: v as never }),
            })),
          wrongType
            .filter((v) => v !== undefined && !(v instanceof Date))
            .map((v) => ({ mention: 'until', run: () => new RateLimited({ until: v as never }) })),
          badKey
            .filter((v) => v !== undefined)
            .map((v) => ({
              mention: 'RateLimited key',
              run: () => new RateLimited({ untilMs: 1, key: v as never }),
            })),
          notObject.map((v) => ({
            mention: 'RateLimited options',
            run: () => new RateLimited(v as never),
          })),
        ),
        async ({ mention, run }) => {
          expectRefused(await rejected(async () => run()), InvalidOptionError, mention)
        },
      ),
      { numRuns: 200 },
    )
    expect(await snapshot(), 'refused calls wrote nothing').toBe(before)
  }, 60_000)

  it('limiters and barriers with extreme valid options answer, never with an SQL error', async () => {
    const { coord } = await ready()
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...LIMITERS),
        safeInt(1, INT4_MAX),
        fc.oneof(safeInt(1), fc.constantFrom(1, Number.MAX_SAFE_INTEGER, INT4_MAX, 2 ** 52)),
        async ([kind, periodName], limit, period) => {
          const limiter = coord[kind](uniqueQueue('ext'), { limit, [periodName]: period } as never)
          const lease = await limiter.acquire()
          await lease.release()
          // A TTL of a few ms could pass before the arrival: a minute at least.
          const ttlMs = Math.max(period, 60_000)
          const barrier = coord.barrier(uniqueQueue('ext'), { parties: limit, ttlMs })
          expect(await barrier.create()).toBe(true)
          expect(await barrier.arrive()).toBe(1)
        },
      ),
      { numRuns: 60 },
    )
  }, 60_000)
})
