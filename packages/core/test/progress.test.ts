import { describe, expect, it } from 'vitest'
import {
  type ActorContext,
  createBroker,
  InvalidPayloadError,
  MAX_PROGRESS_BYTES,
  PayloadTooLargeError,
} from '../src/index.js'
import { setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

/** A gate a handler waits on until the test opens it. */
function gate() {
  let open: () => void = () => {}
  const closed = new Promise<void>((resolve) => {
    open = resolve
  })
  return { closed, open }
}

/** Counts the writes that change a message's progress, with a trigger. */
async function countProgressWrites(queue: string) {
  const table = `progress_writes_${queue}`
  await db.sql.unsafe(`create table ${table} (id uuid, progress jsonb)`)
  await db.sql.unsafe(`create function ${table}_log() returns trigger language plpgsql as $$
    begin insert into ${table} values (new.id, new.progress); return new; end $$`)
  await db.sql.unsafe(`create trigger ${table} after update of progress on iddqueue.messages
    for each row when (new.queue = '${queue}' and new.progress is distinct from old.progress)
    execute function ${table}_log()`)
  return async () => (await db.sql.unsafe(`select progress from ${table}`)).map((r) => r.progress)
}

describe('ctx.progress and getMessage', () => {
  it('shows progress to another connection while the handler runs, and keeps the last value', async () => {
    const broker = db.broker()
    const reader = createBroker({ url: db.url })
    const queue = uniqueQueue('progress')
    const first = gate()
    const reported = gate()
    const job = broker.actor(
      'job',
      async (total: number, ctx: ActorContext) => {
        await ctx.progress({ done: 1, total })
        reported.open()
        await first.closed
        await ctx.progress({ done: total, total })
        return 'ok'
      },
      { queue },
    )
    const message = await job.send(3)
    const worker = broker.worker({ queues: [queue] })
    await worker.start()
    try {
      await reported.closed
      const running = await reader.getMessage(message.id)
      expect(running).toMatchObject({
        id: message.id,
        queue,
        actor: 'job',
        state: 'consumed',
        attempts: 1,
        retries: 0,
        progress: { done: 1, total: 3 },
        failure: null,
        cancelRequested: false,
      })
      expect(running?.startedAt).toBeInstanceOf(Date)
      expect(running?.args).toBeUndefined()
      first.open()
      await broker.join({ queues: [queue] })
      const done = await reader.getMessage(message.id, { payload: true })
      expect(done).toMatchObject({ state: 'done', progress: { done: 3, total: 3 }, args: [3] })
    } finally {
      await worker.stop()
      await reader.close()
    }
  })

  it('writes 100 calls in a tight loop a bounded number of times, ending with the last value', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('chatty')
    const writes = await countProgressWrites(queue)
    let loopMs = 0
    const job = broker.actor(
      'job',
      async (ctx: ActorContext) => {
        const start = performance.now()
        for (let i = 1; i <= 100; i++) await ctx.progress({ i })
        loopMs = performance.now() - start
      },
      { queue },
    )
    const message = await job.send()
    const worker = broker.worker({ queues: [queue] })
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()
    const values = await writes()
    // The first call at once, at most one more per second of the loop, and the last with the outcome.
    expect(values.length).toBeGreaterThanOrEqual(1)
    expect(values.length).toBeLessThanOrEqual(2 + Math.ceil(loopMs / 1000))
    expect(values.at(-1)).toEqual({ i: 100 })
    expect((await broker.getMessage(message.id))?.progress).toEqual({ i: 100 })
  })

  it('refuses a value too large or not JSON with a typed error, and stores nothing', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('large')
    const errors: unknown[] = []
    const job = broker.actor(
      'job',
      async (ctx: ActorContext) => {
        for (const value of ['x'.repeat(MAX_PROGRESS_BYTES), { at: new Date() }, 10n]) {
          await ctx.progress(value).catch((error: unknown) => errors.push(error))
        }
      },
      { queue },
    )
    const message = await job.send()
    const worker = broker.worker({ queues: [queue] })
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()
    expect(errors).toHaveLength(3)
    expect(PayloadTooLargeError.isInstance(errors[0])).toBe(true)
    expect(String(errors[0])).toContain(`over the limit of ${MAX_PROGRESS_BYTES} bytes`)
    expect(InvalidPayloadError.isInstance(errors[1])).toBe(true)
    expect(InvalidPayloadError.isInstance(errors[2])).toBe(true)
    expect(await broker.getMessage(message.id)).toMatchObject({ state: 'done', progress: null })
  })

  it('clears the progress on retry unless the handler sets it again', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('retry')
    const seen: unknown[] = []
    const job = broker.actor(
      'job',
      async (ctx: ActorContext) => {
        seen.push((await broker.getMessage(ctx.message.id))?.progress)
        if (ctx.attempt === 1) {
          await ctx.progress({ step: 'first attempt' })
          throw new Error('fails once')
        }
      },
      { queue, maxRetries: 1, minBackoffMs: 1, maxBackoffMs: 2 },
    )
    const message = await job.send()
    const worker = broker.worker({ queues: [queue] })
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()
    expect(seen).toEqual([null, null])
    expect(await broker.getMessage(message.id)).toMatchObject({
      state: 'done',
      attempts: 2,
      retries: 1,
      progress: null,
    })
  })

  it('is cleared by retryFailed and kept on the rejected message until then', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('rejected')
    const job = broker.actor(
      'job',
      async (ctx: ActorContext) => {
        await ctx.progress(42)
        throw new TypeError('no')
      },
      { queue, maxRetries: 0 },
    )
    const message = await job.send()
    const worker = broker.worker({ queues: [queue] })
    await worker.start()
    await until(
      async () => (await broker.getMessage(message.id))?.state === 'rejected',
      10_000,
      'the rejection',
    )
    await worker.stop()
    const rejected = await broker.getMessage(message.id)
    expect(rejected).toMatchObject({ progress: 42, failure: { type: 'TypeError', message: 'no' } })
    expect(rejected?.failure?.stack).toBeUndefined()
    expect((await broker.getMessage(message.id, { payload: true }))?.failure?.stack).toContain(
      'TypeError',
    )
    expect(await broker.retryFailed(message.id)).toEqual({ status: 'retried' })
    expect((await broker.getMessage(message.id))?.progress).toBeNull()
  })
})
