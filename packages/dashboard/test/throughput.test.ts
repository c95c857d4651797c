import { describe, expect, it } from 'vitest'
import { DashboardData } from '../src/data/dashboard-data.js'
import { THROUGHPUT_MINUTES, type Throughput } from '../src/data/throughput.js'
import { RECOUNT_MS, SETTLE_MS, ThroughputCache } from '../src/live/throughput-cache.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()
const MINUTE = 60_000

/**
 * The chart's counts at chosen instants: every read passes `at`, so a minute
 * closes between two reads without waiting for one. The rows finish around
 * T0, a minute boundary half an hour ago, so nothing another test inserts
 * "now" falls in the window read.
 */
describe('the one-hour chart', () => {
  async function start() {
    const [row] = await db.sql<{ t0: Date }[]>`
      select date_bin('1 minute', now() - interval '30 minutes', timestamptz '2000-01-01 00:00:00+00') as t0`
    const t0 = row!.t0.getTime()
    const queue = uniqueQueue('chart')
    const finish = async (state: 'done' | 'rejected', atMs: number, count = 1) => {
      await db.sql`insert into iddqueue.messages (id, queue, actor, state, eta, enqueued_at, updated_at)
        select gen_random_uuid(), ${queue}, 'chart', ${state}, ${new Date(atMs)}, ${new Date(atMs)}, ${new Date(atMs)}
          from generate_series(1, ${count})`
    }
    const broker = db.broker()
    const errors: unknown[] = []
    const cache = new ThroughputCache(new DashboardData(broker), (error) => errors.push(error))
    return { t0, queue, finish, broker, cache, errors }
  }

  /** The series as sparse { index: count } maps, which read better than 60 numbers. */
  function bars(series: Throughput | undefined) {
    const sparse = (values: readonly number[] = []) =>
      Object.fromEntries(values.flatMap((n, i) => (n === 0 ? [] : [[i, n]])))
    expect(series?.done.length ?? THROUGHPUT_MINUTES).toBe(THROUGHPUT_MINUTES)
    return { done: sparse(series?.done), rejected: sparse(series?.rejected) }
  }

  it('counts each minute, settles a minute that closes between two reads, and counts a settled minute once', async () => {
    const { t0, queue, finish, cache, errors } = await start()
    await finish('done', t0 - 10 * MINUTE + 5_000, 3)
    await finish('rejected', t0 - 10 * MINUTE + 20_000)
    await finish('done', t0 + 10_000, 2)

    // At T0 + 30 s the last bar (59) is T0's minute, so far; T0 - 10 min is bar 49.
    const first = await cache.read(new Date(t0 + 30_000))
    expect(bars(first.get(queue))).toEqual({ done: { 49: 3, 59: 2 }, rejected: { 49: 1 } })
    expect(cache.fullCounts).toBe(1)

    // Rows of T0's minute finishing after that read: at T0 + 40 s (later), at
    // T0 + 25 s (within SETTLE_MS of the read: a settle that committed late
    // but in time), and at T0 + 15 s, more than SETTLE_MS before the read:
    // that part is settled already, so the row waits for the recount.
    expect(SETTLE_MS).toBe(10_000)
    await finish('done', t0 + 40_000, 4)
    await finish('done', t0 + 25_000)
    await finish('done', t0 + 15_000)

    // T0's minute closes: at T0 + 75 s it is bar 58, whole, and stays so.
    const second = await cache.read(new Date(t0 + 75_000))
    expect(bars(second.get(queue))).toEqual({ done: { 48: 3, 58: 7 }, rejected: { 48: 1 } })
    await finish('done', t0 + 70_000, 5)
    const third = await cache.read(new Date(t0 + 90_000))
    expect(bars(third.get(queue))).toEqual({ done: { 48: 3, 58: 7, 59: 5 }, rejected: { 48: 1 } })
    // All queues ('') include this one's.
    expect(third.get('')!.done[58]).toBeGreaterThanOrEqual(7)
    expect(cache.fullCounts).toBe(1)
    expect(errors).toEqual([])
  })

  it('keeps counting purged and deleted rows, as a restarted dashboard does not, and adds late rows at the recount', async () => {
    const { t0, queue, finish, broker, cache, errors } = await start()
    // Minute A (T0 - 10 min) is about 40 minutes old, B (T0 - 2 min) about 32.
    const a = t0 - 10 * MINUTE
    const b = t0 - 2 * MINUTE
    await finish('done', a + 5_000, 3)
    await finish('rejected', a + 20_000)
    await finish('done', b + 5_000, 3)
    await finish('done', b + 40_000, 2)
    await finish('done', t0 + 10_000, 2)
    // At T0 + 75 s: A is bar 48, B bar 56, T0 bar 58.
    const before = await cache.read(new Date(t0 + 75_000))
    expect(bars(before.get(queue))).toEqual({
      done: { 48: 3, 56: 5, 58: 2 },
      rejected: { 48: 1 },
    })

    // The retention purge of what finished more than 35 minutes ago deletes
    // all of A; a delete of B's done rows that finished before B + 20 s, three of B's five.
    const purged = await broker.purge({ olderThanMs: 35 * MINUTE })
    expect(purged.messages).toBeGreaterThanOrEqual(4)
    const deleted = await broker.deleteMessages({
      queue,
      state: 'done',
      finishedBefore: new Date(b + 20_000),
    })
    expect(deleted.deleted).toBe(3)
    const [left] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from iddqueue.messages where queue = ${queue}`
    expect(left!.n).toBe(4)
    // The chart still shows them: they did finish in those minutes.
    const after = await cache.read(new Date(t0 + 80_000))
    expect(bars(after.get(queue))).toEqual(bars(before.get(queue)))
    // A new dashboard counts what is retained.
    const fresh = new ThroughputCache(new DashboardData(broker), (error) => errors.push(error))
    expect(bars((await fresh.read(new Date(t0 + 80_000))).get(queue))).toEqual({
      done: { 56: 2, 58: 2 },
      rejected: {},
    })

    // A row of T0's minute committed after the minute settled: not counted...
    await finish('done', t0 + 30_000)
    const late = await cache.read(new Date(t0 + 2 * MINUTE))
    expect(bars(late.get(queue))).toEqual({ done: { 47: 3, 55: 5, 57: 2 }, rejected: { 47: 1 } })
    // ...until a read RECOUNT_MS after the first count (at T0 + 75 s) starts
    // a recount of the hour, in the background; each minute keeps the
    // greater count, so the late row is added and the deleted ones stay
    // (B's recount finds 2 of its 5).
    expect(RECOUNT_MS).toBe(5 * MINUTE)
    await cache.read(new Date(t0 + 6 * MINUTE))
    await cache.settled()
    expect(cache.fullCounts).toBe(1)
    const at = t0 + 75_000 + RECOUNT_MS
    await cache.read(new Date(at))
    await cache.settled()
    expect(cache.fullCounts).toBe(2)
    const recounted = await cache.read(new Date(at + 1_000))
    expect(bars(recounted.get(queue))).toEqual({
      done: { 43: 3, 51: 5, 53: 3 },
      rejected: { 43: 1 },
    })

    // An hour later A has left the chart: the last hour is the current
    // minute and the 59 before it.
    const later = await cache.read(new Date(t0 + 50 * MINUTE + 30_000))
    expect(bars(later.get(queue))).toEqual({ done: { 7: 5, 9: 3 }, rejected: {} })
    const total = (series: Throughput | undefined) => series!.done.reduce((x, y) => x + y, 0)
    expect(total(later.get(queue))).toBe(8)
    expect(total(recounted.get(queue))).toBe(11)
    await cache.settled()
    expect(errors).toEqual([])
  })
})
