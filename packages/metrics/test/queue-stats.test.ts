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
})
