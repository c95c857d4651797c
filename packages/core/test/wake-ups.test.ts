import { namespace } from '@iddqueue/schema'
import { describe, expect, it } from 'vitest'
import { collectNotifications, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()
const WAKE = namespace().channel('wake')

describe('wake-ups after commit (decision 0010)', () => {
  it('wakes an idle worker of another broker through the notification, not the poll', async () => {
    const queue = uniqueQueue('remote')
    const producer = db.broker()
    const consumer = db.broker()
    const started: number[] = []
    const job = producer.actor('job', (n: number) => n, { queue })
    consumer.actor('job', (n: number) => void started.push(n), { queue })
    // A poll far beyond the test's timeout: only a wake-up can start the message.
    const worker = consumer.worker({ pollIntervalMs: 600_000 })
    await worker.start()
    await until(() => consumer.context.listener.available, 5_000, 'the listener')
    await job.send(1)
    await until(() => started.length === 1, 20_000, 'the message to start')
    await worker.stop()
  })

  it('a send the broker commits notifies after its commit, not inside its transaction', async () => {
    const queue = uniqueQueue('after')
    const broker = db.broker()
    const job = broker.actor('job', (n: number) => n, { queue })
    const wake = await collectNotifications(db.sql, WAKE)
    try {
      // Sixteen concurrent sends: their wake-ups are coalesced into fewer notifications.
      await Promise.all(Array.from({ length: 16 }, (_, i) => job.send(i)))
      await broker.context.waker.drain()
      const payloads = await wake.settled()
      expect(payloads.length).toBeGreaterThanOrEqual(1)
      expect(payloads.length).toBeLessThanOrEqual(16)
      expect(new Set(payloads)).toEqual(new Set([queue]))
    } finally {
      await wake.stop()
    }
  })

  it("inside a caller's transaction the wake-up exists only if it commits", async () => {
    const queue = uniqueQueue('tx')
    const broker = db.broker()
    const job = broker.actor('job', (n: number) => n, { queue })
    const wake = await collectNotifications(db.sql, WAKE)
    try {
      await db.sql
        .begin(async (tx) => {
          await job.sendWithOptions({ args: [1], transaction: tx })
          throw new Error('roll back')
        })
        .catch(() => {})
      await broker.context.waker.drain()
      expect(await wake.settled()).toEqual([])
      await db.sql.begin(async (tx) => {
        await job.sendWithOptions({ args: [2], transaction: tx })
      })
      await broker.context.waker.drain()
      expect(await wake.settled()).toEqual([queue])
    } finally {
      await wake.stop()
    }
  })
})
