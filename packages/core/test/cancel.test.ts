import { describe, expect, it } from 'vitest'
import { type ActorContext, InvalidOptionError, MessageCancelled } from '../src/index.js'
import { emptyClaimsSince, recordClaims, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

describe('cancel', () => {
  it('cancels a queued message: it never runs, and nothing revives it', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    let ran = 0
    const job = broker.actor(
      'job',
      () => {
        ran++
      },
      { queue },
    )
    const message = await job.send()
    expect(await broker.cancel(message.id)).toEqual({ status: 'cancelled', state: 'cancelled' })
    expect(await broker.cancel(message.id)).toEqual({ status: 'cancelled', state: 'cancelled' })
    expect(await broker.cancellationStatus(message.id)).toEqual({
      state: 'cancelled',
      requested: true,
    })
    await broker.enqueue(message)
    expect(await broker.recover()).toBe(0)
    const claims = recordClaims(broker)
    const since = performance.now()
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 50 })
    await worker.start()
    // A claim that started after the re-enqueue and recovery found nothing to take.
    await emptyClaimsSince(claims, [worker.id], since)
    await worker.stop()
    expect(ran).toBe(0)
    const [row] = await db.sql`select state from iddqueue.messages where id = ${message.id}`
    expect(row?.state).toBe('cancelled')
  })

  it('cancels a delayed message', async () => {
    const broker = db.broker()
    const job = broker.actor('later', () => {})
    const message = await job.sendWithOptions({ args: [], delayMs: 60_000 })
    expect(await broker.cancel(message.id)).toEqual({ status: 'cancelled', state: 'cancelled' })
  })

  it('cancels a prefetched message: the worker drops it and it never runs', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    let open: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    const ran: string[] = []
    const job = broker.actor(
      'job',
      async (label: string) => {
        ran.push(label)
        if (label === 'first') await gate
      },
      { queue },
    )
    const first = await job.sendWithOptions({ args: ['first'], priority: 0 })
    const second = await job.sendWithOptions({ args: ['second'], priority: 1 })
    await job.sendWithOptions({ args: ['third'], priority: 2 })
    const worker = broker.worker({ concurrency: 1, prefetch: 5 })
    await worker.start()
    await until(
      () => ran.length === 1 && worker.stats.buffered === 2,
      5_000,
      'first running, two prefetched',
    )
    expect(await broker.cancel(second.id)).toEqual({ status: 'cancelled', state: 'cancelled' })
    open()
    await broker.join({ queues: [queue] })
    await worker.stop()
    expect(ran).toEqual(['first', 'third'])
    const rows =
      await db.sql`select id, state from iddqueue.messages where queue = ${queue} order by priority`
    expect(rows.map((r) => r.state)).toEqual(['done', 'cancelled', 'done'])
    expect(rows[0]?.id).toBe(first.id)
  })

  it('requests cancellation of a running message: its signal aborts and it may return normally', async () => {
    const broker = db.broker()
    let listening = false
    let aborted = false
    let reason: unknown
    const job = broker.actor('cooperative', async (ctx: ActorContext) => {
      const abort = new Promise<void>((resolve) =>
        ctx.signal.addEventListener('abort', () => resolve()),
      )
      listening = true
      await abort
      aborted = true
      reason = ctx.signal.reason
      return 'stopped early'
    })
    const message = await job.send()
    const worker = broker.worker()
    await worker.start()
    await until(() => listening, 5_000, 'the handler to listen to its signal')
    expect(await broker.cancel(message.id)).toEqual({ status: 'requested', state: 'consumed' })
    await until(() => aborted, 5_000, 'the abort')
    expect(MessageCancelled.isInstance(reason)).toBe(true)
    await broker.join()
    await worker.stop()
    expect(await broker.cancellationStatus(message.id)).toEqual({ state: 'done', requested: true })
  })

  it('in poll-only mode, the heartbeat finds the request and aborts the running handler', async () => {
    const broker = db.broker({ pollOnly: true })
    let listening = false
    let reason: unknown
    const queue = uniqueQueue('pollcancel')
    const job = broker.actor(
      'cooperative',
      async (ctx: ActorContext) => {
        const abort = new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve()),
        )
        listening = true
        await abort
        reason = ctx.signal.reason
        throw ctx.signal.reason
      },
      { queue },
    )
    const message = await job.send()
    const worker = broker.worker({ heartbeatIntervalMs: 100, pollIntervalMs: 50 })
    await worker.start()
    await until(() => listening, 5_000, 'the handler to listen to its signal')
    expect(await broker.cancel(message.id)).toEqual({ status: 'requested', state: 'consumed' })
    await until(() => reason !== undefined, 10_000, 'the abort at a heartbeat')
    expect(MessageCancelled.isInstance(reason)).toBe(true)
    await broker.join({ queues: [queue] })
    await worker.stop()
    expect(await broker.cancellationStatus(message.id)).toEqual({
      state: 'cancelled',
      requested: true,
    })
  })

  it('a running handler that fails after the request ends cancelled, never retried', async () => {
    const broker = db.broker()
    let calls = 0
    const job = broker.actor(
      'strict',
      async (ctx: ActorContext) => {
        calls++
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()))
        ctx.signal.throwIfAborted()
      },
      { maxRetries: 5, minBackoffMs: 1, maxBackoffMs: 1 },
    )
    const message = await job.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await until(
      async () => (await broker.cancellationStatus(message.id)).state === 'consumed',
      5_000,
      'the start',
    )
    expect((await broker.cancel(message.id)).status).toBe('requested')
    await until(
      async () => (await broker.cancellationStatus(message.id)).state === 'cancelled',
      5_000,
      'cancelled',
    )
    await worker.stop()
    expect(calls).toBe(1)
    const [row] =
      await db.sql`select state, retries from iddqueue.messages where id = ${message.id}`
    expect(row).toEqual({ state: 'cancelled', retries: 0 })
  })

  it('leaves finished messages alone and reports missing ones', async () => {
    const broker = db.broker()
    const job = broker.actor('quick', () => 'ok')
    const message = await job.send()
    const worker = broker.worker()
    await worker.start()
    await broker.join()
    await worker.stop()
    expect(await broker.cancel(message.id)).toEqual({ status: 'terminal', state: 'done' })
    expect(await broker.cancellationStatus(message.id)).toEqual({ state: 'done', requested: false })
    const missing = crypto.randomUUID()
    expect(await broker.cancel(missing)).toEqual({ status: 'missing', state: null })
    expect(await broker.cancellationStatus(missing)).toEqual({ state: null, requested: false })
    await expect(broker.cancel('not-a-uuid')).rejects.toThrow(InvalidOptionError)
    await expect(broker.cancel("'; drop table x; --")).rejects.toThrow('Invalid message id')
  })
})
