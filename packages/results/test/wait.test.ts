import { InvalidOptionError } from '@iddqueue/core'
import postgres from 'postgres'
import { describe, expect, it } from 'vitest'
import { ResultCancelled, ResultTimeout, results } from '../src/index.js'
import { RECHECK_MS } from '../src/read-result.js'
import { drain, rejection, setupDatabase, uniqueQueue, until, waitersBlocked } from './helpers.js'

const db = setupDatabase()

/** A waiter must answer before the safety re-read, so only a notification can have woken it. */
const BEFORE_RECHECK_MS = RECHECK_MS - 2_000

describe('waiting for a result', () => {
  it('wakes a blocked waiter by NOTIFY, well before its safety re-read', async () => {
    const producer = db.broker({ plugins: [results()] })
    const consumer = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('notify')
    const options = { queue, storeResults: true }
    const add = producer.actor('add', (a: number, b: number) => a + b, options)
    consumer.actor('add', (a: number, b: number) => a + b, options)
    const message = await add.send(20, 22)
    const waiting = message.result({ timeoutMs: BEFORE_RECHECK_MS })
    await waitersBlocked(db.sql, producer)
    const worker = consumer.worker({ queues: [queue], pollIntervalMs: 50 })
    await worker.start()
    try {
      // Its timeout ends before the safety re-read: only the notification can answer it.
      expect(await waiting).toBe(42)
    } finally {
      await worker.stop()
    }
  })

  it('wakes a blocked waiter when the queued message is cancelled: ResultCancelled', async () => {
    const broker = db.broker({ plugins: [results()] })
    const add = broker.actor('add', (a: number, b: number) => a + b, {
      queue: uniqueQueue('cancelwait'),
      storeResults: true,
    })
    const message = await add.send(1, 2)
    const waiting = rejection(message.result({ timeoutMs: BEFORE_RECHECK_MS }))
    await waitersBlocked(db.sql, broker)
    expect((await broker.cancel(message.id)).status).toBe('cancelled')
    expect(ResultCancelled.isInstance(await waiting)).toBe(true)
  })

  it('polls without LISTEN (pollOnly), every pollIntervalMs', async () => {
    const producer = db.broker({ pollOnly: true, plugins: [results({ pollIntervalMs: 100 })] })
    const consumer = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('poll')
    const options = { queue, storeResults: true }
    const add = producer.actor('add', (a: number, b: number) => a + b, options)
    consumer.actor('add', (a: number, b: number) => a + b, options)
    const message = await add.send(1, 1)
    // Blocked before the result exists; a generous timeout, so a loaded
    // machine slowing the drain below cannot fail it (speed is for the bench).
    const waiting = message.result({ timeoutMs: 60_000 })
    // The producer's broker never listens.
    const listening = await db.sql`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and query ilike 'listen%'`
    expect(listening[0]?.n).toBe(0)
    await drain(consumer, [queue])
    expect(await waiting).toBe(2)
  })

  it('throws ResultTimeout when nothing comes within timeoutMs', async () => {
    const broker = db.broker({ plugins: [results()] })
    const add = broker.actor('add', (a: number, b: number) => a + b, {
      queue: uniqueQueue('timeout'),
      storeResults: true,
    })
    const message = await add.send(1, 2)
    const started = performance.now()
    const error = await rejection(message.result({ timeoutMs: 300 }))
    const elapsed = performance.now() - started
    expect(ResultTimeout.isInstance(error)).toBe(true)
    expect((error as ResultTimeout).timeoutMs).toBe(300)
    expect(elapsed).toBeGreaterThanOrEqual(290)
    // timeoutMs 0: one read, then the timeout.
    expect(ResultTimeout.isInstance(await rejection(message.result({ timeoutMs: 0 })))).toBe(true)
  })

  it('shares one LISTEN among many waiters and holds no pool connection while they wait', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('many')
    const add = broker.actor('add', (a: number, b: number) => a + b, { queue, storeResults: true })
    const messages = await broker.enqueueMany(
      Array.from({ length: 50 }, (_, i) => add.message(i, 1)),
    )
    const waiting = Promise.all(messages.map((m) => m.result({ timeoutMs: 10_000 })))
    await waitersBlocked(db.sql, broker)
    const sessions = await db.sql`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name = 'iddqueue'`
    // The LISTEN connection, plus at most a few idle pool connections from the reads.
    expect(sessions[0]?.n).toBeLessThanOrEqual(4)
    const listens = await db.sql`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and query ilike 'listen%'`
    expect(listens[0]?.n).toBe(1)
    await drain(broker, [queue], 16)
    expect(await waiting).toEqual(messages.map((_, i) => i + 1))
  })

  it('coalesces the notifications of a settle batch: comma-separated ids', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('coalesce')
    const add = broker.actor('add', (a: number, b: number) => a + b, { queue, storeResults: true })
    const messages = await broker.enqueueMany(
      Array.from({ length: 40 }, (_, i) => add.message(i, 1)),
    )
    const listener = postgres(db.url, { max: 1, onnotice: () => {} })
    const payloads: string[] = []
    await listener.listen(broker.namespace.channel('result'), (payload) => payloads.push(payload))
    try {
      await drain(broker, [queue], 40)
      await until(
        () => payloads.flatMap((p) => p.split(',')).length >= messages.length,
        5_000,
        'the notifications',
      )
      expect(new Set(payloads.flatMap((p) => p.split(',')))).toEqual(
        new Set(messages.map((m) => m.id)),
      )
      expect(payloads.length).toBeLessThan(messages.length)
    } finally {
      await listener.end()
    }
  })

  it('refuses bad result() options with InvalidOptionError', async () => {
    const broker = db.broker({ plugins: [results()] })
    const add = broker.actor('add', (a: number, b: number) => a + b, {
      queue: uniqueQueue('opts'),
      storeResults: true,
    })
    const message = await add.send(1, 2)
    for (const options of [{ timeoutMs: -1 }, { timeoutMs: 1.5 }, { block: 'no' }]) {
      await expect(message.result(options as never)).rejects.toThrow(InvalidOptionError)
    }
  })
})
