import { collectNamespaceNotifications } from '@iddqueue/testing'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ActorContext } from '../src/index.js'
import { setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

/** In every argument: no notification may ever carry it. */
const SECRET = `secret-argument-${crypto.randomUUID()}`
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'

let caller: postgres.Sql
beforeAll(() => {
  caller = postgres(db.url, { max: 2, onnotice: () => {} })
})
afterAll(() => caller?.end())

describe('NOTIFY payloads', () => {
  it('carry queue names, message and worker ids only: never arguments, on any channel of the namespace', async () => {
    const broker = db.broker({ namespace: { schema: 'payloads' } })
    await broker.migrate()
    const channels = await collectNamespaceNotifications(db.sql, broker.namespace)
    const queue = uniqueQueue('payloads')
    const started: string[] = []
    const work = broker.actor(
      'work',
      async (secret: string, mode: string, ctx: ActorContext) => {
        started.push(ctx.message.id)
        if (mode === 'hold') {
          await new Promise<void>((resolve) =>
            ctx.signal.addEventListener('abort', () => resolve()),
          )
          ctx.signal.throwIfAborted()
        }
        if (mode === 'fail') throw new Error(`failed ${secret.length}`)
      },
      { queue, maxRetries: 0 },
    )

    // Sends: single, batch, deduplicated, delayed, and in the caller's transaction.
    const sent = [
      await work.send(SECRET, 'ok'),
      ...(await broker.enqueueMany([work.message(SECRET, 'ok'), work.message(SECRET, 'fail')])),
      await work.sendWithOptions({ args: [SECRET, 'ok'], dedupKey: SECRET, dedupTtlMs: 60_000 }),
      await caller.begin((tx) => work.sendWithOptions({ args: [SECRET, 'ok'], transaction: tx })),
    ]
    const delayed = await work.sendWithOptions({ args: [SECRET, 'ok'], delayMs: 3_600_000 })
    const cancelledQueued = await work.sendWithOptions({ args: [SECRET, 'ok'], delayMs: 3_600_000 })
    const failed = sent[2]!

    // A worker runs them; pause and resume its queue; cancel a running message.
    const worker = broker.worker({ pollIntervalMs: 50, concurrency: 2 })
    await worker.start()
    await until(
      async () => (await broker.listFailed({ queue })).items.length === 1,
      10_000,
      'the failure',
    )
    expect(await broker.pause(queue)).toMatchObject({ workers: 1, acknowledged: 1 })
    await broker.resume(queue)
    const held = await work.send(SECRET, 'hold')
    await until(() => started.includes(held.id), 10_000, 'the held message to start')
    expect(await broker.cancel(held.id)).toEqual({ status: 'requested', state: 'consumed' })
    expect(await broker.cancel(cancelledQueued.id)).toMatchObject({ status: 'cancelled' })
    // Operations: retry the failure, run the delayed one now.
    expect(await broker.retryFailed(failed.id)).toEqual({ status: 'retried' })
    expect(await broker.runNow(delayed.id)).toMatchObject({ status: 'promoted' })
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    const cancelMany = await work.sendWithOptions({ args: [SECRET, 'ok'], delayMs: 3_600_000 })
    expect(await broker.cancelMany({ queue })).toMatchObject({ cancelled: 1 })
    await worker.stop()
    await db.wakeUpsSent()

    const received = await channels.settled()
    await channels.stop()

    for (const [purpose, payloads] of Object.entries(received)) {
      for (const payload of payloads) expect(payload, `on ${purpose}`).not.toContain(SECRET)
    }
    // Wake-ups: the queue name, nothing else.
    expect(received.wake.length).toBeGreaterThan(0)
    expect(new Set(received.wake)).toEqual(new Set([queue]))
    // Control: the documented grammar, with this queue, this worker and these messages.
    const ids = new Set([...sent, delayed, cancelledQueued, held, cancelMany].map((m) => m.id))
    const control = new RegExp(
      `^(?:(?:pause|resume):${queue}|paused:(${UUID}):${queue}|cancel:(${UUID})|cancelled:(${UUID}):(?:running|dropped))$`,
    )
    for (const payload of received.control) {
      const match = control.exec(payload)
      expect(match, payload).not.toBeNull()
      if (match?.[1]) expect(match[1]).toBe(worker.id)
      for (const id of [match?.[2], match?.[3]]) if (id) expect(ids.has(id), payload).toBe(true)
    }
    expect(received.control).toEqual(
      expect.arrayContaining([
        `pause:${queue}`,
        `paused:${worker.id}:${queue}`,
        `resume:${queue}`,
        `cancel:${held.id}`,
        `cancelled:${held.id}:running`,
      ]),
    )
    // Results: comma-separated ids of messages that will never have another
    // result (here, the cancelled ones).
    for (const payload of received.result) {
      expect(payload).toMatch(new RegExp(`^${UUID}(?:,${UUID})*$`))
      for (const id of payload.split(',')) expect(ids.has(id), payload).toBe(true)
    }
    expect(received.result).toEqual(expect.arrayContaining([cancelledQueued.id, cancelMany.id]))
    // Core sends nothing on the plugins' channels.
    expect(received.coordination).toEqual([])
    expect(received.schedule).toEqual([])
  })
})
