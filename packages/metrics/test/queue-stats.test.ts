import { InvalidIdentifierError, InvalidOptionError } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { queueStats } from '../src/index.js'
import { insertRows, setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

const ZERO = {
  queued: 0,
  consumed: 0,
  done: 0,
  rejected: 0,
  cancelled: 0,
  ready: 0,
  scheduled: 0,
  oldestReadyMs: 0,
  doneLastMinute: 0,
  doneLastHour: 0,
}

describe('queueStats', () => {
  it('counts every state, ready versus scheduled, and the oldest ready age', async () => {
    const queue = uniqueQueue('stats')
    await insertRows(db.sql, queue, [
      // ready: queued and due; the oldest was queued 2 minutes ago with an older eta
      { state: 'queued', eta: '-10 minutes', updated: '-2 minutes' },
      { state: 'queued', eta: '-5 seconds', updated: '-5 seconds' },
      // scheduled: queued or consumed (prefetched) with a future eta
      { state: 'queued', eta: '1 hour', count: 3 },
      { state: 'consumed', eta: '30 minutes' },
      // consumed and due: running, neither ready nor scheduled
      { state: 'consumed', eta: '-1 minute', count: 2 },
      // retained states, and a cancelled message with a future eta (not scheduled)
      { state: 'done', updated: '-10 seconds', count: 4 },
      { state: 'done', updated: '-30 minutes' },
      { state: 'done', updated: '-2 hours' },
      { state: 'rejected', count: 2 },
      { state: 'cancelled', eta: '1 hour' },
    ])
    const broker = db.broker()
    const [stats] = await queueStats(broker, { queue })
    expect(stats).toMatchObject({
      queue,
      queued: 5,
      consumed: 3,
      done: 6,
      rejected: 2,
      cancelled: 1,
      ready: 2,
      scheduled: 4,
      doneLastMinute: 4,
      doneLastHour: 5,
    })
    // from the later of eta and last enqueue: 2 minutes, not 10
    expect(stats!.oldestReadyMs).toBeGreaterThanOrEqual(120_000)
    expect(stats!.oldestReadyMs).toBeLessThan(300_000)
  })

  it('gives zeros for a selected empty queue and lists only queues with rows', async () => {
    const empty = uniqueQueue('empty')
    expect(await queueStats(db.sql, { queue: empty })).toEqual([{ queue: empty, ...ZERO }])
    const a = uniqueQueue('a')
    const b = uniqueQueue('b')
    await insertRows(db.sql, b, [{ state: 'queued', eta: '1 hour' }])
    await insertRows(db.sql, a, [{ state: 'done' }])
    const all = await queueStats(db.sql)
    const names = all.map((s) => s.queue)
    expect(names).toContain(a)
    expect(names).toContain(b)
    expect(names).not.toContain(empty)
    expect(names).toEqual([...names].sort())
    expect(all.find((s) => s.queue === b)).toMatchObject({ queued: 1, scheduled: 1, ready: 0 })
  })

  it('reads another namespace from a plain pool, and refuses bad input before any SQL', async () => {
    const broker = db.broker({ namespace: { schema: 'metrics_other', prefix: 'x_' } })
    await broker.migrate()
    const job = broker.actor('other_job', () => {}, { queue: 'other' })
    await job.send()
    const [fromPool] = await queueStats(db.sql, {
      queue: 'other',
      namespace: { schema: 'metrics_other', prefix: 'x_' },
    })
    expect(fromPool).toMatchObject({ queue: 'other', queued: 1, ready: 1 })
    expect(await queueStats(broker)).toMatchObject([{ queue: 'other', queued: 1 }])
    await expect(queueStats(db.sql, { queue: 'bad name' })).rejects.toBeInstanceOf(
      InvalidIdentifierError,
    )
    await expect(queueStats(broker, { namespace: { schema: 'iddqueue' } })).rejects.toBeInstanceOf(
      InvalidOptionError,
    )
    await expect(queueStats(42 as never)).rejects.toBeInstanceOf(InvalidOptionError)
  })

  it.each([
    [{ retained: 1n }, "Invalid retained 1n: expected 'exact' or 'estimate'"],
    [
      { retained: Object.create(null) },
      "Invalid retained an object: expected 'exact' or 'estimate'",
    ],
    [{ lastHour: 1n }, 'Invalid lastHour 1n: expected true or false'],
    [null, 'Invalid queueStats() options null: expected an object'],
  ])('names any value it refuses: %o', async (options, text) => {
    const error = await queueStats(db.sql, options as never).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(InvalidOptionError)
    expect((error as Error).message).toBe(text)
  })

  it("with retained: 'estimate' counts a small table exactly, from the same fields", async () => {
    const queue = uniqueQueue('fast')
    await insertRows(db.sql, queue, [
      // The least eta is not the oldest ready: that one was queued again 2 minutes ago,
      // the next has waited 5 minutes (the estimate mode reads only rows that can be it).
      { state: 'queued', eta: '-10 minutes', updated: '-2 minutes' },
      { state: 'queued', eta: '-5 minutes', updated: '-5 minutes' },
      { state: 'queued', eta: '-1 minute', updated: '-1 minute' },
      { state: 'queued', eta: '1 hour', count: 3 },
      { state: 'consumed', eta: '30 minutes' },
      { state: 'consumed', eta: '-1 minute', count: 2 },
      { state: 'done', updated: '-10 seconds', count: 4 },
      { state: 'done', updated: '-30 minutes' },
      { state: 'done', updated: '-2 hours' },
      { state: 'rejected', count: 2 },
      { state: 'cancelled', eta: '1 hour', count: 3 },
    ])
    const [exact] = await queueStats(db.sql, { queue })
    const [fast] = await queueStats(db.sql, { queue, retained: 'estimate' })
    const { oldestReadyMs: a, ...exactRest } = exact!
    const { oldestReadyMs: b, ...fastRest } = fast!
    // The table is smaller than the sample: read whole, so nothing is marked estimated.
    expect(fastRest).toEqual(exactRest)
    expect(fastRest).toMatchObject({ queued: 6, consumed: 3, done: 6, rejected: 2, cancelled: 3 })
    for (const oldest of [a, b]) {
      expect(oldest).toBeGreaterThanOrEqual(300_000)
      expect(oldest).toBeLessThan(360_000)
    }
    const all = await queueStats(db.sql, { retained: 'estimate' })
    expect(all.find((s) => s.queue === queue)).toMatchObject({ done: 6, ready: 3, scheduled: 4 })
    expect(all.map((s) => s.queue)).toEqual([...all.map((s) => s.queue)].sort())
    const empty = uniqueQueue('none')
    expect(await queueStats(db.sql, { queue: empty, retained: 'estimate' })).toEqual([
      { queue: empty, ...ZERO },
    ])
    await expect(queueStats(db.sql, { retained: 'sampled' as never })).rejects.toBeInstanceOf(
      InvalidOptionError,
    )
  })

  it('with lastHour: false skips the last minute and hour (both 0) and counts the rest the same', async () => {
    const queue = uniqueQueue('nohour')
    await insertRows(db.sql, queue, [
      { state: 'queued', eta: '-1 minute', updated: '-1 minute' },
      { state: 'done', updated: '-10 seconds', count: 4 },
      { state: 'done', updated: '-30 minutes' },
      { state: 'done', updated: '-2 hours' },
      { state: 'rejected', count: 2 },
    ])
    for (const retained of ['exact', 'estimate'] as const) {
      const [counted] = await queueStats(db.sql, { queue, retained })
      const [skipped] = await queueStats(db.sql, { queue, retained, lastHour: false })
      expect(counted).toMatchObject({ doneLastMinute: 4, doneLastHour: 5 })
      const { oldestReadyMs: a, ...countedRest } = counted!
      const { oldestReadyMs: b, ...skippedRest } = skipped!
      expect(skippedRest).toEqual({ ...countedRest, doneLastMinute: 0, doneLastHour: 0 })
      expect(skippedRest).toMatchObject({ queued: 1, ready: 1, done: 6, rejected: 2 })
      for (const oldest of [a, b]) expect(oldest).toBeGreaterThanOrEqual(60_000)
    }
    await expect(queueStats(db.sql, { lastHour: 'no' as never })).rejects.toThrow(
      'Invalid lastHour "no": expected true or false',
    )
  })

  it("with retained: 'estimate' over a table larger than the sample, estimates done and cancelled only", async () => {
    const queue = uniqueQueue('big')
    // About 12 MB: more blocks than the sample reads.
    await db.sql`insert into iddqueue.messages (id, queue, actor, state, args, updated_at)
      select gen_random_uuid(), ${queue}, 'bulk', case when i % 10 = 0 then 'cancelled' else 'done' end,
             jsonb_build_array(repeat('x', 200)), now() - interval '2 hours'
        from generate_series(1, 40000) as i`
    await insertRows(db.sql, queue, [
      { state: 'done', updated: '-10 minutes', count: 7 },
      { state: 'rejected', count: 5 },
      { state: 'queued', count: 2 },
    ])
    await db.sql`analyze iddqueue.messages`
    const [fast] = await queueStats(db.sql, { queue, retained: 'estimate' })
    expect(fast).toMatchObject({
      queue,
      estimated: true,
      queued: 2,
      ready: 2,
      rejected: 5,
      doneLastHour: 7,
      doneLastMinute: 0,
    })
    // A block sample, scaled by the share of blocks it read: close, not exact.
    expect(fast!.done).toBeGreaterThan(36_007 * 0.85)
    expect(fast!.done).toBeLessThan(36_007 * 1.15)
    expect(fast!.cancelled).toBeGreaterThan(4_000 * 0.8)
    expect(fast!.cancelled).toBeLessThan(4_000 * 1.2)
    const [exact] = await queueStats(db.sql, { queue })
    expect(exact).toMatchObject({ done: 36_007, cancelled: 4_000 })
    expect(exact).not.toHaveProperty('estimated')
  })
})
