import { InvalidOptionError } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { coordination, RateLimitExceeded } from '../src/index.js'
import { rejection, runChild, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

type Report = { max: number; leases: [number, number][] }

async function ready() {
  const coord = coordination({ purgeIntervalMs: false })
  const broker = db.broker({ plugins: [coord] })
  await broker.ready()
  return { coord, broker }
}

describe('concurrentLimiter', () => {
  it('never has more than its limit of holders: 2 processes x 25 acquirers, 2,000 acquisitions', async () => {
    const key = uniqueQueue('api')
    await db.sql`insert into public.holders (key, n, max) values (${key}, 0, 0)`
    const args = [db.url, 'concurrent', key, '5', '120000', '25', '40']
    const reports = (
      await Promise.all([
        runChild<Report>('acquirers.mjs', args).done,
        runChild<Report>('acquirers.mjs', args).done,
      ])
    ).flat()
    expect(reports.flatMap((r) => r.leases)).toHaveLength(2_000)
    const [row] = await db.sql`select n, max from public.holders where key = ${key}`
    expect(row?.n).toBe(0)
    expect(row?.max).toBeLessThanOrEqual(5)
    expect(Math.max(...reports.map((r) => r.max))).toBeLessThanOrEqual(5)
    // Every slot was released.
    const [left] =
      await db.sql`select count(*)::int as n from iddqueue.coordination_slots where key = ${key}`
    expect(left?.n).toBe(0)
  }, 180_000)

  it('refuses when full, frees on release, and `await using` releases', async () => {
    const { coord } = await ready()
    const limiter = coord.concurrentLimiter(uniqueQueue('k'), { limit: 2, ttlMs: 60_000 })
    const a = await limiter.acquire()
    const b = await limiter.tryAcquire()
    expect(b).toBeDefined()
    expect(await limiter.tryAcquire()).toBeUndefined()
    const refused = await rejection(limiter.acquire())
    expect(RateLimitExceeded.isInstance(refused)).toBe(true)
    expect((refused as RateLimitExceeded).key).toBe(limiter.key)
    expect(await a.release()).toBe(true)
    expect(await a.release()).toBe(false)
    {
      await using lease = await limiter.acquire()
      expect(lease.expiresAt.getTime()).toBeGreaterThan(lease.acquiredAt.getTime())
      expect(await limiter.tryAcquire()).toBeUndefined()
    }
    const c = await limiter.tryAcquire()
    expect(c).toBeDefined()
    await c?.release()
    await b?.release()
    expect(await limiter.withLimit(async () => 'ran')).toBe('ran')
  })

  it('wakes a waiter on a release from another broker, through LISTEN', async () => {
    const { coord } = await ready()
    const other = coordination({ purgeIntervalMs: false })
    await db.broker({ plugins: [other] }).ready()
    const key = uniqueQueue('k')
    const mine = coord.concurrentLimiter(key, { limit: 1, ttlMs: 600_000 })
    const theirs = other.concurrentLimiter(key, { limit: 1, ttlMs: 600_000 })
    const held = await theirs.acquire()
    let got = false
    const waiting = mine.acquire({ waitMs: 120_000 }).then((lease) => {
      got = true
      return lease
    })
    // The waiter has tried and is asleep once it is registered and refused.
    await until(
      async () => {
        const [row] = await db.sql`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and query ilike 'listen%'`
        return (row?.n ?? 0) > 0
      },
      20_000,
      'the waiter to listen',
    )
    expect(got).toBe(false)
    await held.release()
    const lease = await waiting
    expect(lease.key).toBe(key)
    await lease.release()
  })

  it('a waiter gets a slot whose holder vanished without a notification, and gives up at its timeout', async () => {
    const { coord } = await ready()
    const key = uniqueQueue('k')
    const limiter = coord.concurrentLimiter(key, { limit: 1, ttlMs: 600_000 })
    const held = await limiter.acquire()
    const timedOut = await rejection(limiter.acquire({ waitMs: 300 }))
    expect(RateLimitExceeded.isInstance(timedOut)).toBe(true)
    const waiting = limiter.acquire({ waitMs: 60_000 })
    // Delete the slot behind the limiter's back: no notification is sent.
    await db.sql`delete from iddqueue.coordination_slots where key = ${key}`
    const lease = await waiting
    await lease.release()
    expect(await held.release()).toBe(false)
  })

  it('frees a slot when its TTL passes', async () => {
    const { coord } = await ready()
    const limiter = coord.concurrentLimiter(uniqueQueue('k'), { limit: 1, ttlMs: 200 })
    await limiter.acquire()
    const lease = await limiter.acquire({ waitMs: 60_000 })
    await lease.release()
  })

  it('RateLimitExceeded from a handler is retried with backoff by the retry middleware', async () => {
    const { coord, broker } = await ready()
    const queue = uniqueQueue()
    const limiter = coord.concurrentLimiter(uniqueQueue('k'), { limit: 1, ttlMs: 60_000 })
    const blocker = await limiter.acquire()
    let calls = 0
    const actor = broker.actor(
      'limited',
      async () => {
        calls++
        if (calls === 2) await blocker.release()
        await limiter.withLimit(async () => 'ok')
      },
      { queue, maxRetries: 3, minBackoffMs: 10, maxBackoffMs: 20 },
    )
    const message = await actor.send()
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 20 })
    await worker.start()
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await worker.stop()
    const [row] =
      await db.sql`select state, attempts from iddqueue.messages where id = ${message.id}`
    expect(row?.state).toBe('done')
    expect(row?.attempts).toBe(2)
  })
})

function perBucket(leases: [number, number][]): Map<number, number> {
  const counts = new Map<number, number>()
  for (const [, end] of leases) counts.set(end, (counts.get(end) ?? 0) + 1)
  return counts
}

describe('bucketLimiter and windowLimiter', () => {
  it('a bucket never gives out more than its limit, across processes', async () => {
    const key = uniqueQueue('b')
    const args = [db.url, 'bucket', key, '5', '250', '5', '8']
    const leases = (
      await Promise.all([
        runChild<Report>('acquirers.mjs', args).done,
        runChild<Report>('acquirers.mjs', args).done,
      ])
    )
      .flat()
      .flatMap((r) => r.leases)
    expect(leases).toHaveLength(80)
    const counts = perBucket(leases)
    expect(counts.size).toBeGreaterThanOrEqual(16)
    for (const n of counts.values()) expect(n).toBeLessThanOrEqual(5)
    for (const [start, end] of leases) {
      expect(end - start).toBeLessThanOrEqual(250)
      expect(end % 250).toBe(0)
    }
  }, 120_000)

  it('a window never grants more than its limit within any window, across processes', async () => {
    const key = uniqueQueue('w')
    const windowMs = 300
    const args = [db.url, 'window', key, '5', String(windowMs), '5', '6']
    const starts = (
      await Promise.all([
        runChild<Report>('acquirers.mjs', args).done,
        runChild<Report>('acquirers.mjs', args).done,
      ])
    )
      .flat()
      .flatMap((r) => r.leases.map(([start]) => start))
      .sort((a, b) => a - b)
    expect(starts).toHaveLength(60)
    // Any window [s, s + windowMs) holds at most 5: check the windows starting at each grant.
    for (let i = 0; i < starts.length; i++) {
      const inWindow = starts.filter((t) => t >= starts[i]! && t < starts[i]! + windowMs).length
      expect(inWindow).toBeLessThanOrEqual(5)
    }
  }, 120_000)

  it('refuse and wait like the concurrent limiter', async () => {
    const { coord } = await ready()
    const bucket = coord.bucketLimiter(uniqueQueue('b'), { limit: 1, bucketMs: 60_000 })
    const lease = await bucket.acquire()
    expect(await lease.release()).toBe(false)
    expect(await bucket.tryAcquire()).toBeUndefined()
    const window = coord.windowLimiter(uniqueQueue('w'), { limit: 1, windowMs: 200 })
    await window.acquire()
    expect(await window.tryAcquire()).toBeUndefined()
    const next = await window.acquire({ waitMs: 60_000 })
    expect(next.acquiredAt.getTime()).toBeGreaterThanOrEqual(lease.acquiredAt.getTime())
  })
})

describe('bad input', () => {
  it('typed errors naming the value, before any SQL, nothing stored', async () => {
    const { coord } = await ready()
    const bad: [string, () => unknown][] = [
      ['limit 0', () => coord.concurrentLimiter('k', { limit: 0, ttlMs: 1_000 })],
      ['negative', () => coord.bucketLimiter('k', { limit: -1, bucketMs: 1_000 })],
      ['NaN', () => coord.windowLimiter('k', { limit: Number.NaN, windowMs: 1_000 })],
      ['non-integer', () => coord.concurrentLimiter('k', { limit: 1.5, ttlMs: 1_000 })],
      ['ttl', () => coord.concurrentLimiter('k', { limit: 1, ttlMs: 0 })],
      [
        'bucketMs',
        () => coord.bucketLimiter('k', { limit: 1, bucketMs: Number.POSITIVE_INFINITY }),
      ],
      ['long key', () => coord.concurrentLimiter('x'.repeat(10_000), { limit: 1, ttlMs: 1_000 })],
      ['empty key', () => coord.windowLimiter('', { limit: 1, windowMs: 1_000 })],
      [
        'key type',
        () => coord.windowLimiter(42 as unknown as string, { limit: 1, windowMs: 1_000 }),
      ],
      ['options', () => coord.concurrentLimiter('k', undefined as never)],
      ['parties', () => coord.barrier('k', { parties: 0, ttlMs: 1_000 })],
      ['group', () => coord.group([])],
      ['coordination()', () => coordination({ groupTtlMs: -5 })],
    ]
    for (const [label, make] of bad) {
      let error: unknown
      try {
        make()
      } catch (caught) {
        error = caught
      }
      expect(InvalidOptionError.isInstance(error), label).toBe(true)
    }
    expect(
      String(
        (() => {
          try {
            coord.concurrentLimiter('k', { limit: 0, ttlMs: 1 })
          } catch (e) {
            return e
          }
        })(),
      ),
    ).toContain('limit 0')
    const limiter = coord.concurrentLimiter('k', { limit: 1, ttlMs: 1_000 })
    expect(InvalidOptionError.isInstance(await rejection(limiter.acquire({ waitMs: -1 })))).toBe(
      true,
    )
    const [row] = await db.sql`select
      (select count(*) from iddqueue.coordination_locks where key in ('k', '')) +
      (select count(*) from iddqueue.coordination_buckets where key = 'k') +
      (select count(*) from iddqueue.coordination_barriers where key = 'k') +
      (select count(*) from iddqueue.coordination_groups) as n`
    expect(Number(row?.n)).toBe(0)
  })
})
