import { type ActorContext, InvalidOptionError, type Message } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { ResultCancelled, ResultFailure, ResultMissing, results } from '../src/index.js'
import { drain, rejection, resultRows, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

describe('stored results', () => {
  it('returns the value a handler returned, as JSON gives it back; undefined and null stay apart', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('value')
    const echo = broker.actor('echo', (value: unknown) => value, { queue, storeResults: true })
    const nothing = broker.actor('nothing', () => {}, { queue, storeResults: true })
    const value = { total: 3, items: ['a', 'b'], nested: { ok: true, none: null }, text: 'é\u2028' }
    const sent = await echo.send(value)
    const zero = await echo.send(0)
    const none = await echo.send(null)
    const empty = await nothing.send()
    await drain(broker, [queue])
    expect(await sent.result({ block: false })).toEqual(value)
    expect(await zero.result({ block: false })).toBe(0)
    expect(await none.result({ block: false })).toBeNull()
    expect(await empty.result({ block: false })).toBeUndefined()
    const rows = await resultRows(db.sql, [sent.id, empty.id])
    expect(rows.get(sent.id)?.status).toBe('success')
    expect(rows.get(empty.id)?.value).toBeNull()
  })

  it('throws ResultMissing at once for a message that has not run, without blocking', async () => {
    const broker = db.broker({ plugins: [results()] })
    const add = broker.actor('add', (a: number, b: number) => a + b, {
      queue: uniqueQueue('missing'),
      storeResults: true,
    })
    const message = await add.send(1, 2)
    const started = performance.now()
    const error = await rejection(message.result({ block: false }))
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(ResultMissing.isInstance(error)).toBe(true)
    expect((error as ResultMissing).messageId).toBe(message.id)
    expect((error as Error).message).toContain(message.id)
  })

  it('stores nothing for an actor without storeResults', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('plain')
    const plain = broker.actor('plain', () => 42, { queue })
    const failing = broker.actor(
      'failing',
      () => {
        throw new TypeError('no')
      },
      { queue, maxRetries: 0 },
    )
    const a = await plain.send()
    const b = await failing.send()
    await drain(broker, [queue])
    expect((await resultRows(db.sql, [a.id, b.id])).size).toBe(0)
    expect(ResultMissing.isInstance(await rejection(a.result({ block: false })))).toBe(true)
    expect(ResultMissing.isInstance(await rejection(b.result({ block: false })))).toBe(true)
  })

  it('stores the final failure once retries run out: ResultFailure with the error type and text', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('fail')
    class PaymentDeclined extends Error {}
    let attempts = 0
    const charge = broker.actor(
      'charge',
      (orderId: string) => {
        attempts++
        throw new PaymentDeclined(`card declined for ${orderId}`)
      },
      { queue, storeResults: true, maxRetries: 2, minBackoffMs: 0, maxBackoffMs: 0 },
    )
    const message = await charge.send('order-7')
    await drain(broker, [queue])
    expect(attempts).toBe(3)
    const error = await rejection(message.result({ block: false }))
    expect(ResultFailure.isInstance(error)).toBe(true)
    expect(ResultCancelled.isInstance(error)).toBe(false)
    const failure = (error as ResultFailure).failure
    expect(failure).toMatchObject({
      type: 'PaymentDeclined',
      message: 'card declined for order-7',
      attempt: 3,
    })
    expect((error as Error).message).toContain('PaymentDeclined: card declined for order-7')
    // No stack, no arguments: only what the failure record says.
    const stored = (await resultRows(db.sql, [message.id])).get(message.id)?.failure
    expect(Object.keys(stored).sort()).toEqual(['at', 'attempt', 'message', 'type'])
  })

  it('stores the rejection of a message skipped by its age limit (its handler never ran)', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('age')
    let ran = false
    const stale = broker.actor(
      'stale',
      () => {
        ran = true
      },
      { queue, storeResults: true, maxAgeMs: 1 },
    )
    const message = await stale.send()
    // Sent a second ago, by PostgreSQL's clock.
    await db.sql`update iddqueue.messages set enqueued_at = enqueued_at - interval '1 second'
      where id = ${message.id}`
    await drain(broker, [queue])
    expect(ran).toBe(false)
    const error = await rejection(message.result({ block: false }))
    expect(ResultFailure.isInstance(error)).toBe(true)
    expect((error as ResultFailure).failure.type).toBe('AgeLimitExceeded')
  })

  it('stores nothing for an attempt that will be retried, then the value of the one that succeeds', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('retry')
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    let attempts = 0
    const flaky = broker.actor(
      'flaky',
      async (n: number) => {
        attempts++
        if (attempts === 1) throw new Error('transient')
        await gate
        return n * 2
      },
      { queue, storeResults: true, maxRetries: 3, minBackoffMs: 0, maxBackoffMs: 0 },
    )
    const message = await flaky.send(21)
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 50 })
    await worker.start()
    try {
      // The second attempt is running: the first one's failure was settled (retried).
      await until(() => attempts === 2, 10_000, 'the second attempt')
      const [row] = await db.sql`select retries from iddqueue.messages where id = ${message.id}`
      expect(row?.retries).toBe(1)
      expect((await resultRows(db.sql, [message.id])).size).toBe(0)
      expect(ResultMissing.isInstance(await rejection(message.result({ block: false })))).toBe(true)
      release()
      expect(await message.result({ timeoutMs: 10_000 })).toBe(42)
    } finally {
      release()
      await worker.stop()
    }
  })

  it('stores a cancellation: ResultCancelled, a ResultFailure, for a running message cancelled', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('cancel')
    let started = false
    const slow = broker.actor(
      'slow',
      async (ctx: ActorContext) => {
        started = true
        await new Promise((_, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))
        })
      },
      { queue, storeResults: true, maxRetries: 5, minBackoffMs: 0 },
    )
    const message = await slow.send()
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 50 })
    await worker.start()
    try {
      await until(() => started, 10_000, 'the handler to start')
      expect((await broker.cancel(message.id)).status).toBe('requested')
      const error = await rejection(message.result({ timeoutMs: 10_000 }))
      expect(ResultCancelled.isInstance(error)).toBe(true)
      expect(ResultFailure.isInstance(error)).toBe(true)
      expect((error as ResultCancelled).failure.type).toBe('MessageCancelled')
      expect((await resultRows(db.sql, [message.id])).get(message.id)?.status).toBe('cancelled')
    } finally {
      await worker.stop()
    }
  })

  it('a message cancelled before it ran reads as ResultCancelled, without a stored row', async () => {
    const broker = db.broker({ plugins: [results()] })
    const add = broker.actor('add', (a: number, b: number) => a + b, {
      queue: uniqueQueue('cancelq'),
      storeResults: true,
    })
    const message = await add.send(1, 2)
    expect((await broker.cancel(message.id)).status).toBe('cancelled')
    expect(ResultCancelled.isInstance(await rejection(message.result({ block: false })))).toBe(true)
    expect((await resultRows(db.sql, [message.id])).size).toBe(0)
  })

  it('keeps every outcome of a batch when one result does not survive JSON: that one reads as a failure', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('json')
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    const bad: Record<string, unknown> = {
      bigint: 10n,
      date: new Date(0),
      cycle,
      nul: 'a\u0000b',
      surrogate: '\ud800',
    }
    let running = 0
    const make = broker.actor(
      'make',
      async (kind: string) => {
        // Finish together, so the outcomes share a settle batch.
        running++
        await until(() => running >= 6, 5_000, 'every handler to start')
        return kind === 'good' ? { kind } : bad[kind]
      },
      { queue, storeResults: true, maxRetries: 0 },
    )
    const kinds = ['good', 'bigint', 'date', 'cycle', 'nul', 'surrogate']
    const sent = (await broker.enqueueMany(kinds.map((kind) => make.message(kind)))) as Message[]
    await drain(broker, [queue], 8)
    const states =
      await db.sql`select state from iddqueue.messages where id = any(${sent.map((m) => m.id)}::uuid[])`
    expect(states.map((row) => row.state)).toEqual(kinds.map(() => 'done'))
    expect(await sent[0]!.result({ block: false })).toEqual({ kind: 'good' })
    const problems: Record<string, string> = {}
    for (const [index, kind] of kinds.entries()) {
      if (kind === 'good') continue
      const error = await rejection(sent[index]!.result({ block: false }))
      expect(ResultFailure.isInstance(error), kind).toBe(true)
      expect((error as ResultFailure).failure.type).toBe('ResultNotStored')
      problems[kind] = (error as ResultFailure).failure.message
    }
    expect(problems.bigint).toContain('result is a BigInt')
    expect(problems.date).toContain('result is a Date')
    expect(problems.cycle).toContain('result.self is a circular reference')
    expect(problems.nul).toContain('\\u0000')
    expect(problems.surrogate).toContain('unpaired surrogate')
  })

  it('stores a result whose getter throws a value String() throws on as a failure that says so', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('getter')
    const odd = broker.actor(
      'odd',
      () => ({
        get field() {
          throw Object.create(null)
        },
      }),
      { queue, storeResults: true, maxRetries: 0 },
    )
    const message = await odd.send()
    await drain(broker, [queue])
    const [row] = await db.sql`select state from iddqueue.messages where id = ${message.id}`
    expect(row?.state).toBe('done')
    const error = await rejection(message.result({ block: false }))
    expect(ResultFailure.isInstance(error)).toBe(true)
    expect((error as ResultFailure).failure).toMatchObject({
      type: 'ResultNotStored',
      message: `The result of actor odd was not stored: result could not be read (an object), so it cannot be stored`,
    })
  })

  it('works with deleteOnSuccess: the message row is gone, its result is not', async () => {
    const broker = db.broker({ plugins: [results()], deleteOnSuccess: true })
    const queue = uniqueQueue('delete')
    const add = broker.actor('add', (a: number, b: number) => a + b, { queue, storeResults: true })
    const message = await add.send(2, 3)
    const waiting = message.result({ timeoutMs: 10_000 })
    await drain(broker, [queue])
    expect(await waiting).toBe(5)
    expect(await db.sql`select id from iddqueue.messages where id = ${message.id}`).toHaveLength(0)
    expect(await message.result({ block: false })).toBe(5)
  })

  it('forgets the old failure when broker.retryFailed() revives the message', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('revive')
    let fail = true
    const job = broker.actor(
      'job',
      () => {
        if (fail) throw new Error('down')
        return 'up'
      },
      { queue, storeResults: true, maxRetries: 0 },
    )
    const message = await job.send()
    await drain(broker, [queue])
    expect(ResultFailure.isInstance(await rejection(message.result({ block: false })))).toBe(true)
    expect((await broker.retryFailed(message.id)).status).toBe('retried')
    expect(ResultMissing.isInstance(await rejection(message.result({ block: false })))).toBe(true)
    fail = false
    await drain(broker, [queue])
    expect(await message.result({ block: false })).toBe('up')
  })

  it('expires results after resultTtlMs; purgeResults deletes the expired rows only', async () => {
    const plugin = results({ purgeIntervalMs: false })
    const broker = db.broker({ plugins: [plugin] })
    const queue = uniqueQueue('ttl')
    const brief = broker.actor('brief', () => 'soon gone', {
      queue,
      storeResults: true,
      // Long enough for the read below on a loaded machine (300 ms was not).
      resultTtlMs: 2_000,
    })
    const lasting = broker.actor('lasting', () => 'kept', { queue, storeResults: true })
    const a = await brief.send()
    const b = await lasting.send()
    await drain(broker, [queue])
    expect(await a.result({ block: false })).toBe('soon gone')
    // Its TTL ran out a second ago, by PostgreSQL's clock.
    await db.sql`update iddqueue.results set expires_at = now() - interval '1 second'
      where message_id = ${a.id}`
    expect(ResultMissing.isInstance(await rejection(a.result({ block: false })))).toBe(true)
    expect(await b.result({ block: false })).toBe('kept')
    // Expired but still there, until purged.
    expect((await resultRows(db.sql, [a.id])).size).toBe(1)
    expect(await plugin.purgeResults()).toBeGreaterThanOrEqual(1)
    const rows = await resultRows(db.sql, [a.id, b.id])
    expect([...rows.keys()]).toEqual([b.id])
    expect(await plugin.purgeResults()).toBe(0)
  })

  it('purges expired results on its own every purgeIntervalMs', async () => {
    const broker = db.broker({ plugins: [results({ purgeIntervalMs: 100 })] })
    const queue = uniqueQueue('autopurge')
    const brief = broker.actor('brief', () => 1, { queue, storeResults: true, resultTtlMs: 50 })
    const message = await brief.send()
    await drain(broker, [queue])
    await until(
      async () => (await resultRows(db.sql, [message.id])).size === 0,
      5_000,
      'the periodic purge',
    )
  })

  it('refuses a bad purgeResults batch size', async () => {
    const plugin = results()
    db.broker({ plugins: [plugin] })
    await expect(plugin.purgeResults({ batchSize: 0 })).rejects.toThrow(InvalidOptionError)
  })
})
