import { InvalidOptionError } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { coordination, RateLimited } from '../src/index.js'
import { rejection, setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

async function ready() {
  const coord = coordination({ purgeIntervalMs: false })
  const broker = db.broker({ plugins: [coord] })
  await broker.ready()
  return { coord, broker }
}

/** The error `run` throws, or rejects with. */
async function refusal(run: () => unknown): Promise<Error> {
  return (await rejection((async () => run())())) as Error
}

/** Every row a refused call could have written, as text. */
async function snapshot(): Promise<string> {
  const [row] = await db.sql`select
      (select count(*) from iddqueue.messages)::int as messages,
      (select count(*) from iddqueue.coordination_limits)::int as limits,
      (select count(*) from iddqueue.coordination_locks)::int as locks,
      (select count(*) from iddqueue.coordination_slots)::int as slots,
      (select count(*) from iddqueue.coordination_buckets)::int as buckets,
      (select count(*) from iddqueue.coordination_hits)::int as hits,
      (select count(*) from iddqueue.coordination_barriers)::int as barriers,
      (select count(*) from iddqueue.coordination_groups)::int as groups`
  return JSON.stringify(row)
}

const KEY = 'expected a non-empty string of at most 512 characters'
const INT4 = 'expected an integer from 1 to 2147483647'
const DURATION = 'expected an integer from 1 to 9007199254740991'

describe('refusals name any value', () => {
  // String() throws on an object without a prototype and on a symbol in a
  // template: the refusal must still be InvalidOptionError, naming the value.
  const bare = Object.create(null)

  it.each([
    [
      'a bigint key',
      () => coordination().concurrentLimiter(1n as never, { limit: 1, ttlMs: 1_000 }),
      `Invalid concurrentLimiter key 1n: ${KEY}`,
    ],
    [
      'a key without a prototype',
      () => coordination().bucketLimiter(bare, { limit: 1, bucketMs: 1_000 }),
      `Invalid bucketLimiter key an object: ${KEY}`,
    ],
    [
      'a symbol key',
      () => coordination().windowLimiter(Symbol('k') as never, { limit: 1, windowMs: 1_000 }),
      `Invalid windowLimiter key a symbol: ${KEY}`,
    ],
    [
      'a barrier key without a prototype',
      () => coordination().barrier(bare, { parties: 2, ttlMs: 1_000 }),
      `Invalid barrier key an object: ${KEY}`,
    ],
    [
      'a bigint limit',
      () => coordination().concurrentLimiter('k', { limit: 1n as never, ttlMs: 1_000 }),
      `Invalid limit 1n for concurrentLimiter("k"): ${INT4}`,
    ],
    [
      'a bucketMs without a prototype',
      () => coordination().bucketLimiter('k', { limit: 1, bucketMs: bare }),
      `Invalid bucketMs an object for bucketLimiter("k"): ${DURATION}`,
    ],
    [
      'a bigint groupTtlMs',
      () => coordination({ groupTtlMs: 5n as never }),
      `Invalid groupTtlMs 5n for coordination(): ${DURATION}`,
    ],
    // Past 2^31 - 1 ms a Node timer fires after 1 ms: a purge every millisecond.
    [
      'a purgeIntervalMs past what a timer keeps',
      () => coordination({ purgeIntervalMs: 2 ** 31 }),
      `Invalid purgeIntervalMs 2147483648 for coordination(): ${INT4}`,
    ],
    [
      'a pollIntervalMs past what a timer keeps',
      () => coordination({ pollIntervalMs: 2 ** 40 }),
      `Invalid pollIntervalMs 1099511627776 for coordination(): ${INT4}`,
    ],
    [
      'a bigint declared limit',
      () => coordination({ limits: [1n as never] }),
      'Invalid coordination limit 1n: expected { queue | actor, concurrency?, rate? }',
    ],
    [
      'a bigint declared rate',
      () => coordination({ limits: [{ queue: 'q', rate: 1n as never }] }),
      'Invalid option rate for the queue limit q: expected { limit, periodMs }, got 1n',
    ],
    [
      'a RateLimited key without a prototype',
      () => new RateLimited({ untilMs: 1, key: bare }),
      `Invalid RateLimited key an object: ${KEY}`,
    ],
    // Date's getTime threw a TypeError on it.
    [
      'a RateLimited until that only inherits from Date.prototype',
      () => new RateLimited({ until: Object.create(Date.prototype) }),
      'Invalid RateLimited until an object: expected a valid Date',
    ],
    [
      'a RateLimited until without a prototype',
      () => new RateLimited({ until: bare }),
      'Invalid RateLimited until an object: expected a valid Date',
    ],
  ])('%s', async (_label, run, text) => {
    const error = await refusal(run)
    expect(error).toBeInstanceOf(InvalidOptionError)
    expect(error.message).toBe(text)
  })

  it('names them in actor options, acquire(), setLimit() and purge(), writing nothing', async () => {
    const { coord, broker } = await ready()
    const queue = uniqueQueue('any')
    const before = await snapshot()
    const limiter = coord.concurrentLimiter('k', { limit: 1, ttlMs: 1_000 })
    const plain = broker.actor('plain', () => {}, { queue })
    const odd = broker.actor('odd', (_n: number) => {}, {
      queue,
      concurrency: {
        limit: 1,
        key: () => {
          throw bare
        },
      },
    })
    const cases: [() => unknown, string][] = [
      [
        () => broker.actor('bad', () => {}, { queue, concurrency: 1n as never }),
        'Invalid option concurrency for actor bad: expected { limit, key? }, got 1n',
      ],
      [
        () => broker.actor('bad', () => {}, { queue, rate: Symbol('r') as never }),
        'Invalid option rate for actor bad: expected { limit, periodMs }, got a symbol',
      ],
      [
        () => limiter.acquire({ waitMs: bare }),
        'Invalid waitMs an object for concurrentLimiter("k").acquire(): expected an integer from 0 to 9007199254740991',
      ],
      [
        () => coord.setLimit({ key: 'k' }, { concurrency: 2n as never }),
        `Invalid concurrency 2n for the key limit k: ${INT4}`,
      ],
      [
        () => coord.setLimit({ key: bare }, { concurrency: 1 }),
        `Invalid limit key key an object: ${KEY}`,
      ],
      [() => odd.send(1), 'The concurrency key function of actor odd threw: an object'],
      // The send refused it after the group row was written.
      [
        () => coord.group([plain.message()]).run({ delayMs: Number.MAX_SAFE_INTEGER }),
        'Invalid delayMs 9007199254740991 for group.run(): the eta it gives is past the latest Date (+275760-09-13)',
      ],
      [
        () => coord.purge({ batchSize: 1n as never }),
        'Invalid batchSize 1n: expected an integer of at least 1',
      ],
      // It read null.batchSize: a TypeError.
      [() => coord.purge(null as never), 'Invalid purge() options null: expected an object'],
    ]
    for (const [run, text] of cases) {
      const error = await refusal(run)
      expect(error, text).toBeInstanceOf(InvalidOptionError)
      expect(error.message).toBe(text)
    }
    expect(await snapshot()).toBe(before)
  })
})

describe('keys with an unpaired surrogate', () => {
  // Sent as UTF-8, both become 'a\ufffd': they would share one limit.
  const high = 'a\ud800'
  const low = 'a\udc00'

  it('are refused by every limiter and the barrier, before any SQL', async () => {
    expect(Buffer.from(high)).toEqual(Buffer.from(low))
    const { coord } = await ready()
    const before = await snapshot()
    for (const key of [high, low]) {
      const shown = JSON.stringify(key)
      const cases: [() => unknown, string][] = [
        [() => coord.concurrentLimiter(key, { limit: 1, ttlMs: 60_000 }), 'concurrentLimiter'],
        [() => coord.bucketLimiter(key, { limit: 1, bucketMs: 60_000 }), 'bucketLimiter'],
        [() => coord.windowLimiter(key, { limit: 1, windowMs: 60_000 }), 'windowLimiter'],
        [() => coord.barrier(key, { parties: 1, ttlMs: 60_000 }), 'barrier'],
      ]
      for (const [run, what] of cases) {
        const error = await refusal(run)
        expect(error, what).toBeInstanceOf(InvalidOptionError)
        expect(error.message).toBe(
          `Invalid ${what} key ${shown}: it contains an unpaired surrogate`,
        )
      }
    }
    expect(await snapshot()).toBe(before)
    // A well-formed key with a surrogate pair is still taken.
    const lease = await coord
      .concurrentLimiter('a\ud83d\ude00', { limit: 1, ttlMs: 60_000 })
      .acquire()
    await lease.release()
  })

  it('are refused as limit targets, declared limits and RateLimited keys', async () => {
    const { coord } = await ready()
    const before = await snapshot()
    for (const key of [high, low]) {
      const shown = JSON.stringify(key)
      const error = await refusal(() => coord.setLimit({ key }, { concurrency: 1 }))
      expect(error).toBeInstanceOf(InvalidOptionError)
      expect(error.message).toBe(
        `Invalid limit key key ${shown}: it contains an unpaired surrogate`,
      )
      const thrown = await refusal(() => new RateLimited({ untilMs: 1, key }))
      expect(thrown).toBeInstanceOf(InvalidOptionError)
      expect(thrown.message).toBe(
        `Invalid RateLimited key ${shown}: it contains an unpaired surrogate`,
      )
      const declared = await refusal(() =>
        coordination({ limits: [{ actor: key, concurrency: 1 }] }),
      )
      expect(declared).toBeInstanceOf(InvalidOptionError)
    }
    expect(await snapshot()).toBe(before)
  })

  it('are refused as concurrencyKey, rateKey and from key functions, sending nothing', async () => {
    const { broker } = await ready()
    const queue = uniqueQueue('surrogate')
    const byKey = broker.actor('by_key', (key: string) => key, {
      queue,
      concurrency: { key: (key: string) => key, limit: 1 },
      rate: { key: (key: string) => `r:${key}`, limit: 1, periodMs: 60_000 },
    })
    const before = await snapshot()
    for (const key of [high, low]) {
      const shown = JSON.stringify(key)
      const cases: [() => unknown, string][] = [
        [
          () => byKey.send(key),
          `Invalid concurrency (from actor by_key) key ${shown}: it contains an unpaired surrogate`,
        ],
        [
          () => byKey.sendWithOptions({ args: ['ok'], options: { concurrencyKey: key } }),
          `Invalid concurrency key ${shown}: it contains an unpaired surrogate`,
        ],
        [
          () => byKey.sendWithOptions({ args: ['ok'], options: { rateKey: key } }),
          `Invalid rate key ${shown}: it contains an unpaired surrogate`,
        ],
        [
          () => broker.enqueueMany([byKey.message('ok'), byKey.message(key)]),
          `Invalid concurrency (from actor by_key) key ${shown}: it contains an unpaired surrogate`,
        ],
      ]
      for (const [run, text] of cases) {
        const error = await refusal(run)
        expect(error, text).toBeInstanceOf(InvalidOptionError)
        expect(error.message).toBe(text)
      }
    }
    expect(await snapshot(), 'no message or limit row was written').toBe(before)
  })
})
