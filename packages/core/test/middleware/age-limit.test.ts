import { describe, expect, it } from 'vitest'
import { uniqueQueue } from '../helpers.js'
import { db, messageRow, stateOf } from './middleware-fixture.js'

describe('age limit', () => {
  it('rejects a message older than maxAgeMs without running it', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const ran: string[] = []
    const fresh = broker.actor(
      'fresh',
      (label: string) => {
        ran.push(label)
      },
      { queue, maxAgeMs: 100 },
    )
    const stale = await fresh.send('stale')
    // Sent a second ago, by PostgreSQL's clock (the age limit's clock).
    await db.sql`update iddqueue.messages set enqueued_at = enqueued_at - interval '1 second'
      where id = ${stale.id}`
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    // A message sent now is young enough: the limit is per message.
    const young = await fresh.send('young')
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()

    expect(ran).toEqual(['young'])
    const row = await messageRow(stale.id)
    expect(row).toMatchObject({
      state: 'rejected',
      retries: 0,
      attempts: 1,
      failure: { type: 'AgeLimitExceeded', attempt: 1 },
    })
    expect(row.failure.message).toContain('over maxAgeMs 100 of actor fresh')
    expect(await stateOf(young.id)).toBe('done')
  })

  it('measures from the first enqueue: a retry that waited past maxAgeMs is rejected unrun', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    let calls = 0
    // The backoff is 300-600 ms, past the 250 ms age limit.
    const slowRetry = broker.actor(
      'slow_retry',
      () => {
        calls++
        throw new Error('first attempt fails')
      },
      { queue, maxAgeMs: 250, maxRetries: 5, minBackoffMs: 600, maxBackoffMs: 600 },
    )
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    const message = await slowRetry.send()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(calls).toBe(1)
    expect(await messageRow(message.id)).toMatchObject({
      state: 'rejected',
      retries: 1,
      attempts: 2,
      failure: { type: 'AgeLimitExceeded', attempt: 2 },
    })
  })
})
