import { collectNamespaceNotifications } from '@iddqueue/testing'
import { describe, expect, it } from 'vitest'
import { ResultFailure, results } from '../src/index.js'
import { IDS_PER_NOTIFICATION } from '../src/results.js'
import { rejection, setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

const SECRET = `secret-${crypto.randomUUID()}`

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
describe('NOTIFY payloads of the results plugin', () => {
  it('are comma-separated message ids, never arguments, values or errors', async () => {
    const broker = db.broker({ plugins: [results()] })
    await broker.ready()
    const channels = await collectNamespaceNotifications(db.sql, broker.namespace)
    const queue = uniqueQueue('payloads')
    const echo = broker.actor(
      'echo',
      (secret: string, fail: boolean) => {
        if (fail) throw new Error(`failed: ${secret}`)
        return { secret }
      },
      { queue, storeResults: true, maxRetries: 0 },
    )
    // More ids than one notification holds, should one settle take them all.
    const count = IDS_PER_NOTIFICATION + 5
    const sent = await broker.enqueueMany([
      ...Array.from({ length: count }, () => echo.message(SECRET, false)),
      echo.message(SECRET, true),
    ])
    const worker = broker.worker({ pollIntervalMs: 50, concurrency: 8 })
    await worker.start()
    await broker.join({ queues: [queue], timeoutMs: 30_000 })
    await worker.stop()
    expect(await sent[0]!.result()).toEqual({ secret: SECRET })
    expect(await rejection(sent.at(-1)!.result())).toBeInstanceOf(ResultFailure)

    const received = await channels.settled()
    await channels.stop()
    for (const [purpose, payloads] of Object.entries(received)) {
      for (const payload of payloads) expect(payload, `on ${purpose}`).not.toContain(SECRET)
    }
    const ids = new Set(sent.map((m) => m.id))
    const notified: string[] = []
    for (const payload of received.result) {
      expect(payload).toMatch(new RegExp(`^${UUID}(?:,${UUID})*$`))
      const chunk = payload.split(',')
      expect(chunk.length).toBeLessThanOrEqual(IDS_PER_NOTIFICATION)
      notified.push(...chunk)
    }
    // Every stored result, success or failure, is announced by its id.
    expect(new Set(notified)).toEqual(ids)
    expect(new Set(received.wake)).toEqual(new Set([queue]))
    expect(received.control).toEqual([])
    expect(received.coordination).toEqual([])
    expect(received.schedule).toEqual([])
  })
})
