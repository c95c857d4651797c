import { collectNamespaceNotifications } from '@iddqueue/testing'
import { describe, expect, it } from 'vitest'
import { coordination } from '../src/index.js'
import { drain, setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

const SECRET = `secret-${crypto.randomUUID()}`

describe('NOTIFY payloads of the coordination plugin', () => {
  it('name the limiter or barrier key (one: or all:) and, for claim slots, the queue; never arguments', async () => {
    const coord = coordination({ purgeIntervalMs: false })
    const broker = db.broker({ plugins: [coord] })
    await broker.ready()
    const channels = await collectNamespaceNotifications(db.sql, broker.namespace)
    const key = uniqueQueue('key')

    // A concurrent limiter's release wakes one waiter of its key.
    const lease = await coord.concurrentLimiter(key, { limit: 1, ttlMs: 60_000 }).tryAcquire()
    expect(await lease!.release()).toBe(true)
    expect((await channels.settled()).coordination).toEqual([`one:concurrent:${key}`])
    // Bucket and window tokens are never released: nothing to say.
    await coord.bucketLimiter(key, { limit: 5, bucketMs: 60_000 }).tryAcquire()
    await coord.windowLimiter(key, { limit: 5, windowMs: 60_000 }).tryAcquire()
    expect((await channels.settled()).coordination).toEqual([])
    // A barrier's last arrival wakes all its waiters.
    const barrier = coord.barrier(key, { parties: 2, ttlMs: 60_000 })
    await barrier.create()
    await barrier.arrive()
    expect((await channels.settled()).coordination).toEqual([])
    await barrier.arrive()
    expect((await channels.settled()).coordination).toEqual([`all:barrier:${key}`])

    // Claim-enforced slots and group callbacks: their wake-ups name the queue.
    const queue = uniqueQueue('payloads')
    const calls: string[] = []
    const work = broker.actor('work', (secret: string) => void calls.push(secret), {
      queue,
      concurrency: { key: (secret: string) => secret, limit: 1 },
    })
    const done = broker.actor('done', (secret: string) => void calls.push(`done ${secret}`), {
      queue,
    })
    await coord
      .group([work.message(SECRET), work.message(SECRET), work.message(SECRET)])
      .run({ onCompletion: done.message(SECRET) })
    await drain(broker, [queue])
    expect(calls).toHaveLength(4)

    const received = await channels.settled()
    await channels.stop()
    for (const [purpose, payloads] of Object.entries(received)) {
      for (const payload of payloads) expect(payload, `on ${purpose}`).not.toContain(SECRET)
    }
    expect(received.wake.length).toBeGreaterThan(0)
    expect(new Set(received.wake)).toEqual(new Set([queue]))
    expect(received.coordination).toEqual([])
    expect(received.control).toEqual([])
    expect(received.result).toEqual([])
    expect(received.schedule).toEqual([])
  })
})
