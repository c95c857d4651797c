import { describe, expect, it } from 'vitest'
import {
  type ActorContext,
  type AttemptRecord,
  attemptHistory,
  consoleLogger,
  InvalidOptionError,
  InvalidStateError,
  type Logger,
  uuid7,
} from '../src/index.js'
import { recordEvents, setupDatabase, sleep, states, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

const SECRET_ARG = 'secret-argument-4f1c'
const SECRET_RESULT = 'secret-result-93ab'

function recordingLogger() {
  const warnings: { message: string; fields: unknown }[] = []
  const logger: Logger = {
    debug() {},
    info() {},
    warn(message, fields) {
      warnings.push({ message, fields })
    },
    error(message, fields) {
      warnings.push({ message, fields })
    },
  }
  return { logger, warnings }
}

async function attemptRows(messageId: string) {
  return db.sql`select * from iddqueue.attempts where message_id = ${messageId} order by id`
}

describe('attempt history', () => {
  it('records each attempt: two failures then a success, with timings and errors', async () => {
    const history = attemptHistory()
    expect(history.name).toBe('@iddqueue/core/history')
    expect(history.migrations).toBeUndefined()
    const broker = db.broker({ plugins: [history] })
    const queue = uniqueQueue('history')
    const flaky = broker.actor(
      'flaky',
      async (secret: string, ctx: ActorContext) => {
        await sleep(5)
        if (ctx.attempt < 3) throw new RangeError(`attempt ${ctx.attempt} failed`)
        return `${SECRET_RESULT}:${secret.length}`
      },
      { queue, maxRetries: 5, minBackoffMs: 1, maxBackoffMs: 5 },
    )
    const message = await flaky.send(SECRET_ARG)
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()

    const { items, nextAfter } = await history.listAttempts(message.id)
    expect(nextAfter).toBeNull()
    expect(items.map((a) => a.status)).toEqual(['failed', 'failed', 'successful'])
    expect(items.map((a) => a.errorType)).toEqual(['RangeError', 'RangeError', null])
    expect(items.map((a) => a.errorMessage)).toEqual(['attempt 1 failed', 'attempt 2 failed', null])
    expect(new Set(items.map((a) => a.id)).size).toBe(3)
    for (const attempt of items) {
      expect(attempt).toMatchObject({ messageId: message.id, actor: 'flaky', queue })
      expect(attempt.workerId).toBe(worker.id)
      expect(attempt.startedAt).toBeInstanceOf(Date)
      expect(attempt.finishedAt).toBeInstanceOf(Date)
      expect(attempt.finishedAt!.getTime()).toBeGreaterThanOrEqual(attempt.startedAt.getTime())
      expect(attempt.durationMs).toBeGreaterThanOrEqual(4)
    }
    // One worker process: UUID order is start order.
    const starts = items.map((a) => a.startedAt.getTime())
    expect(starts).toEqual([...starts].sort((a, b) => a - b))

    // The table holds no arguments or results: no such column, no such value.
    const rows = await attemptRows(message.id)
    expect(rows).toHaveLength(3)
    expect(Object.keys(rows[0]!).sort()).toEqual(
      [
        'actor',
        'duration_ms',
        'error_message',
        'error_type',
        'finished_at',
        'id',
        'message_id',
        'outcome',
        'queue',
        'started_at',
        'worker_id',
      ].sort(),
    )
    const text = JSON.stringify(rows)
    expect(text).not.toContain(SECRET_ARG)
    expect(text).not.toContain(SECRET_RESULT)
  })

  it('leaves an attempt incomplete when its worker gives up on it, and records the next run apart', async () => {
    const history = attemptHistory()
    // Silent: the shutdown timeout warns, as it should.
    const broker = db.broker({ plugins: [history], logger: consoleLogger('silent') })
    const queue = uniqueQueue('stuck')
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    let runs = 0
    const stubborn = broker.actor(
      'stubborn',
      // Ignores its signal: the worker cannot stop it, only abandon it.
      async () => {
        runs++
        if (runs === 1) await gate
        return 'finished'
      },
      { queue },
    )
    const message = await stubborn.send()
    const worker = broker.worker({ shutdownTimeoutMs: 50 })
    await worker.start()
    await until(() => runs === 1, 5_000, 'the handler to start')
    await until(
      async () => (await attemptRows(message.id)).length === 1,
      5_000,
      'the attempt record',
    )
    await worker.stop()
    expect(await states(db.sql, { queue })).toEqual({ queued: 1 })

    // The abandoned handler ends later: its outcome is not recorded.
    const finished = recordEvents(broker, 'message:finished')
    release()
    await until(() => finished.length === 1, 5_000, 'the abandoned run to finish')
    let { items } = await history.listAttempts(message.id)
    expect(items).toHaveLength(1)
    expect(items[0]).toMatchObject({
      status: 'incomplete',
      finishedAt: null,
      durationMs: null,
      errorType: null,
    })

    const again = broker.worker()
    await again.start()
    await broker.join({ queues: [queue] })
    await again.stop()
    ;({ items } = await history.listAttempts(message.id))
    expect(items.map((a) => a.status)).toEqual(['incomplete', 'successful'])
    expect(items[1]?.workerId).toBe(again.id)
  })

  it('records nothing for a message skipped before its handler', async () => {
    const history = attemptHistory()
    const broker = db.broker({ plugins: [history] })
    const queue = uniqueQueue()
    const old = broker.actor('old', () => 1, { queue, maxAgeMs: 1 })
    const message = await old.send()
    // Sent a minute ago, by PostgreSQL's clock.
    await db.sql`update iddqueue.messages set enqueued_at = enqueued_at - interval '1 minute'
      where id = ${message.id}`
    const worker = broker.worker()
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()
    expect(await states(db.sql, { queue })).toEqual({ rejected: 1 })
    expect((await history.listAttempts(message.id)).items).toEqual([])
  })

  it('pages through attempts by cursor and refuses bad options', async () => {
    const history = attemptHistory()
    const broker = db.broker({ plugins: [history] })
    const queue = uniqueQueue()
    const persistent = broker.actor(
      'persistent',
      (ctx: ActorContext) => {
        if (ctx.attempt < 5) throw new Error(`no ${ctx.attempt}`)
      },
      { queue, maxRetries: 10, minBackoffMs: 1, maxBackoffMs: 2 },
    )
    const message = await persistent.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()

    const pages: AttemptRecord[][] = []
    let after: string | undefined
    for (;;) {
      const page = await history.listAttempts(message.id, { limit: 2, after })
      pages.push(page.items)
      if (page.nextAfter === null) break
      after = page.nextAfter
    }
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1])
    const ids = pages.flat().map((a) => a.id)
    expect(ids).toEqual([...ids].sort())
    expect(new Set(ids).size).toBe(5)
    expect(pages.flat().map((a) => a.status)).toEqual([
      'failed',
      'failed',
      'failed',
      'failed',
      'successful',
    ])
    expect(await history.listAttempts(uuid7())).toEqual({ items: [], nextAfter: null })

    for (const options of [{ limit: 0 }, { limit: 1001 }, { limit: 1.5 }, { after: 'x' }]) {
      await expect(history.listAttempts(message.id, options)).rejects.toSatisfy((error) =>
        InvalidOptionError.isInstance(error),
      )
    }
    await expect(history.listAttempts('not-a-uuid')).rejects.toSatisfy((error) =>
      InvalidOptionError.isInstance(error),
    )
    await expect(history.purgeAttempts({ olderThanMs: -1 })).rejects.toSatisfy((error) =>
      InvalidOptionError.isInstance(error),
    )
  })

  it('purges attempts by start time in batches, incomplete ones included', async () => {
    const history = attemptHistory()
    const broker = db.broker({ plugins: [history] })
    const queue = uniqueQueue('purge')
    const quick = broker.actor('quick', () => 1, { queue })
    const recent = await quick.send()
    const worker = broker.worker()
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()
    const oldMessage = uuid7()
    // 12,001 old attempts (more than two batches), finished and incomplete.
    await db.sql`insert into iddqueue.attempts (id, message_id, actor, queue, started_at, finished_at, outcome, duration_ms)
      select gen_random_uuid(), ${oldMessage}, 'quick', ${queue}, now() - interval '2 days',
             case when g % 2 = 0 then now() - interval '2 days' end,
             case when g % 2 = 0 then 'successful' end,
             case when g % 2 = 0 then 1 end
        from generate_series(1, 12001) as g`
    expect(await history.purgeAttempts({ olderThanMs: 24 * 3600 * 1000 })).toBe(12_001)
    const [left] =
      await db.sql`select count(*)::int as n from iddqueue.attempts where message_id = ${oldMessage}`
    expect(left?.n).toBe(0)
    expect((await history.listAttempts(recent.id)).items).toHaveLength(1)
    expect(await history.purgeAttempts({ olderThanMs: 24 * 3600 * 1000 })).toBe(0)
    // Messages are left alone.
    expect(await states(db.sql, { queue })).toEqual({ done: 1 })
  })

  it('never fails a message because history cannot be written', async () => {
    const { logger, warnings } = recordingLogger()
    const history = attemptHistory()
    const broker = db.broker({ plugins: [history], logger })
    const queue = uniqueQueue('broken')
    const job = broker.actor('job', (n: number) => n, { queue })
    const worker = broker.worker()
    await worker.start()
    try {
      // The outcome cannot be written: the settle transaction still commits.
      await db.sql`alter table iddqueue.attempts add constraint no_finish check (finished_at is null) not valid`
      const first = await job.send(1)
      await broker.join({ queues: [queue] })
      expect((await history.listAttempts(first.id)).items.map((a) => a.status)).toEqual([
        'incomplete',
      ])
      await db.sql`alter table iddqueue.attempts drop constraint no_finish`
      // The start cannot be written: the handler runs without a record.
      await db.sql`alter table iddqueue.attempts rename to attempts_off`
      const second = await job.send(2)
      await broker.join({ queues: [queue] })
      await db.sql`alter table iddqueue.attempts_off rename to attempts`
      expect((await history.listAttempts(second.id)).items).toEqual([])
    } finally {
      await db.sql`alter table if exists iddqueue.attempts_off rename to attempts`
      await db.sql`alter table iddqueue.attempts drop constraint if exists no_finish`
      await worker.stop()
    }
    expect(await states(db.sql, { queue })).toEqual({ done: 2 })
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/could not record attempt outcomes/),
      expect.stringMatching(/could not record an attempt start/),
    ])
  })

  it('belongs to one broker', async () => {
    const history = attemptHistory()
    const first = db.broker({ plugins: [history] })
    const second = db.broker({ plugins: [history] })
    const queue = uniqueQueue()
    await first.enqueue(first.message('a', [], { queue }))
    await expect(second.enqueue(second.message('a', [], { queue }))).rejects.toSatisfy(
      (error) =>
        InvalidStateError.isInstance(error) && /once per broker/.test((error as Error).message),
    )
  })
})
