import { describe, expect, it } from 'vitest'
import {
  type Broker,
  type FailedSummary,
  InvalidIdentifierError,
  InvalidOptionError,
  type Middleware,
  uuid7,
} from '../src/index.js'
import {
  collectNotifications,
  setupDatabase,
  sleep,
  states,
  uniqueQueue,
  until,
} from './helpers.js'

const db = setupDatabase()

/** Declares an actor on `queue` that always throws a TypeError, with no retries. */
function failing(broker: Broker, name: string, queue: string) {
  return broker.actor(
    name,
    (n: number) => {
      throw new TypeError(`boom ${n}`)
    },
    { queue, maxRetries: 0 },
  )
}

async function rejectedCount(queue: string): Promise<number> {
  return (await states(db.sql, { queue })).rejected ?? 0
}

/** Every page of listFailed with these filters, in order. */
async function allPages(
  broker: Broker,
  options: { queue?: string; actor?: string; limit?: number },
): Promise<FailedSummary[][]> {
  const pages: FailedSummary[][] = []
  let after: string | undefined
  for (;;) {
    const page = await broker.listFailed({ ...options, after })
    pages.push(page.items)
    if (page.nextAfter === null) return pages
    expect(page.nextAfter).toBe(page.items[page.items.length - 1]?.id)
    after = page.nextAfter
  }
}

describe('listFailed', () => {
  it('lists rejected messages by queue and actor, in UUID order, a page at a time', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('failed')
    const other = uniqueQueue('other')
    const fails = failing(broker, 'fails', queue)
    const also = failing(broker, 'also_fails', queue)
    const elsewhere = failing(broker, 'fails_elsewhere', other)
    const fine = broker.actor('fine', () => 'ok', { queue })
    const sent = await broker.enqueueMany([
      ...Array.from({ length: 12 }, (_, i) => fails.message(i)),
      ...Array.from({ length: 3 }, (_, i) => also.message(100 + i)),
      ...Array.from({ length: 2 }, (_, i) => elsewhere.message(200 + i)),
      fine.message(),
      fine.message(),
    ])
    const worker = broker.worker()
    await worker.start()
    await broker.join({ queues: [queue, other] })
    await worker.stop()
    expect(await states(db.sql, { queue })).toEqual({ rejected: 15, done: 2 })

    const pages = await allPages(broker, { queue, limit: 5 })
    // 15 items: three full pages, then an empty last one.
    expect(pages.map((p) => p.length)).toEqual([5, 5, 5, 0])
    const ids = pages.flat().map((item) => item.id)
    const expected = sent
      .filter((m) => m.queue === queue && m.actor !== 'fine')
      .map((m) => m.id)
      .sort()
    expect(ids).toEqual(expected)

    const page = await broker.listFailed({ queue, actor: 'also_fails' })
    expect(page.nextAfter).toBeNull()
    expect(page.items).toHaveLength(3)
    const item = page.items[0]!
    expect(Object.keys(item).sort()).toEqual(
      ['actor', 'enqueuedAt', 'failure', 'id', 'queue', 'retries', 'updatedAt'].sort(),
    )
    expect(item).toMatchObject({ queue, actor: 'also_fails', retries: 0 })
    expect(item.enqueuedAt).toBeInstanceOf(Date)
    expect(item.updatedAt).toBeInstanceOf(Date)
    expect(item.updatedAt.getTime()).toBeGreaterThanOrEqual(item.enqueuedAt.getTime())
    expect(item.failure).toMatchObject({ type: 'TypeError', message: 'boom 100', attempt: 1 })
    expect(typeof item.failure?.at).toBe('string')
    // The stack stays out of listings.
    expect(item.failure).not.toHaveProperty('stack')

    // An actor across every queue.
    const byActor = await broker.listFailed({ actor: 'fails_elsewhere', limit: 1000 })
    expect(byActor.items.map((i) => i.queue)).toEqual([other, other])
    // A full page whose next page is empty.
    const exact = await broker.listFailed({ queue: other, limit: 2 })
    expect(exact.items).toHaveLength(2)
    expect(await broker.listFailed({ queue: other, after: exact.nextAfter! })).toEqual({
      items: [],
      nextAfter: null,
    })
  })

  it('lists a message rejected without failure metadata with failure null', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const message = await broker.enqueue(broker.message('legacy', [], { queue }))
    await db.sql`update iddqueue.messages set state = 'rejected' where id = ${message.id}`
    const { items } = await broker.listFailed({ queue })
    expect(items).toHaveLength(1)
    expect(items[0]).toMatchObject({ id: message.id, failure: null })
  })

  it('pages while a worker rejects more: no id twice, UUID order, every earlier one listed', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('stream')
    const fails = failing(broker, 'fails', queue)
    await broker.enqueueMany(Array.from({ length: 60 }, (_, i) => fails.message(i)))
    const worker = broker.worker({ concurrency: 2 })
    await worker.start()
    await until(async () => (await rejectedCount(queue)) === 60, 10_000, '60 rejections')
    const before = (
      await db.sql`select id from iddqueue.messages where queue = ${queue} and state = 'rejected'`
    ).map((r) => r.id as string)

    // A producer keeps sending failing messages while the listing pages through.
    let producing = true
    let produced = 0
    const producer = (async () => {
      while (producing) {
        await fails.send(1000 + produced++)
        await sleep(2)
      }
    })()
    const listed: string[] = []
    let after: string | undefined
    let pages = 0
    const rejectedAtStart = await rejectedCount(queue)
    for (;;) {
      const page = await broker.listFailed({ queue, after, limit: 7 })
      listed.push(...page.items.map((item) => item.id))
      pages++
      if (page.nextAfter === null) break
      after = page.nextAfter
      // Let at least one more failing message be sent between pages, so the
      // stream overlaps the listing however slow the machine is.
      const sent = produced
      await until(() => produced > sent, 10_000, 'the producer to send again')
    }
    producing = false
    await producer
    await broker.join({ queues: [queue] })
    await worker.stop()

    // The stream really overlapped the listing.
    expect(produced).toBeGreaterThan(5)
    expect(await rejectedCount(queue)).toBeGreaterThan(rejectedAtStart)
    expect(pages).toBeGreaterThan(5)
    expect(new Set(listed).size).toBe(listed.length)
    expect(listed).toEqual([...listed].sort())
    expect(listed).toEqual(expect.arrayContaining(before))
    // Anything listed was rejected.
    const rows =
      await db.sql`select count(*)::int as n from iddqueue.messages where id = any(${listed}::uuid[]) and state = 'rejected'`
    expect(rows[0]?.n).toBe(listed.length)
  })

  it('refuses a bad limit, cursor or name', async () => {
    const broker = db.broker()
    for (const limit of [0, -1, 1001, 2.5, Number.NaN]) {
      await expect(broker.listFailed({ limit })).rejects.toSatisfy(
        (error) => InvalidOptionError.isInstance(error) && /Invalid limit/.test(String(error)),
      )
    }
    await expect(broker.listFailed({ limit: 1000 })).resolves.toBeTruthy()
    await expect(broker.listFailed({ after: 'not-a-uuid' })).rejects.toSatisfy((error) =>
      InvalidOptionError.isInstance(error),
    )
    await expect(broker.listFailed({ queue: 'bad queue' })).rejects.toSatisfy((error) =>
      InvalidIdentifierError.isInstance(error),
    )
    await expect(broker.listFailed({ actor: '-bad' })).rejects.toSatisfy((error) =>
      InvalidIdentifierError.isInstance(error),
    )
  })
})

describe('showFailed', () => {
  it('shows a rejected message, with its payload only on request', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const fails = failing(broker, 'fails', queue)
    const message = await fails.sendWithOptions({
      args: [7],
      priority: 3,
      options: { tenant: 'acme' },
    })
    const worker = broker.worker()
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()

    const plain = await broker.showFailed(message.id)
    expect(plain).toMatchObject({
      id: message.id,
      queue,
      actor: 'fails',
      retries: 0,
      priority: 3,
      failure: { type: 'TypeError', message: 'boom 7', attempt: 1 },
    })
    expect(plain?.eta).toBeInstanceOf(Date)
    expect(plain).not.toHaveProperty('args')
    expect(plain).not.toHaveProperty('options')
    expect(plain?.failure).not.toHaveProperty('stack')

    const full = await broker.showFailed(message.id, { payload: true })
    expect(full).toMatchObject({
      id: message.id,
      args: [7],
      options: { tenant: 'acme' },
      failure: { type: 'TypeError', message: 'boom 7' },
    })
    expect(full?.failure?.stack).toMatch(/TypeError: boom 7/)
  })

  it('returns undefined for a missing or not rejected message, and refuses a bad id', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const queued = await broker.enqueue(broker.message('later', [], { queue }))
    expect(await broker.showFailed(queued.id)).toBeUndefined()
    expect(await broker.showFailed(uuid7())).toBeUndefined()
    await expect(broker.showFailed('42')).rejects.toSatisfy((error) =>
      InvalidOptionError.isInstance(error),
    )
  })
})

describe('retryFailed', () => {
  it('requeues a rejected message with its id, arguments and options, and it runs again', async () => {
    const revived: string[][] = []
    const reviveHook: Middleware = {
      async revive({ messageIds, executor }) {
        expect(executor.inTransaction).toBe(true)
        revived.push([...messageIds])
      },
    }
    const broker = db.broker({ middleware: [reviveHook] })
    const queue = uniqueQueue()
    let healthy = false
    const runs: number[] = []
    const flaky = broker.actor(
      'flaky',
      (n: number) => {
        runs.push(n)
        if (!healthy) throw new Error(`down ${n}`)
        return n * 2
      },
      { queue, maxRetries: 1, minBackoffMs: 1, maxBackoffMs: 1 },
    )
    const message = await flaky.sendWithOptions({ args: [21], priority: 5, options: { k: 'v' } })
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ queues: [queue] })
    expect(runs).toEqual([21, 21])
    const [rejected] =
      await db.sql`select state, retries, failure, worker_id from iddqueue.messages where id = ${message.id}`
    expect(rejected).toMatchObject({ state: 'rejected', retries: 1 })
    expect(rejected?.failure).toMatchObject({ message: 'down 21', attempt: 2 })
    expect(rejected?.worker_id).not.toBeNull()

    await worker.stop()
    const wake = await collectNotifications(db.sql, broker.context.statements.wakeChannel)
    try {
      expect(await broker.retryFailed(message.id)).toEqual({ status: 'retried' })
      const [row] =
        await db.sql`select *, eta <= now() as due from iddqueue.messages where id = ${message.id}`
      expect(row).toMatchObject({
        state: 'queued',
        retries: 0,
        failure: null,
        worker_id: null,
        due: true,
        actor: 'flaky',
        args: [21],
        options: { k: 'v' },
        priority: 5,
      })
      expect(row?.updated_at.getTime()).toBeGreaterThanOrEqual(rejected?.updated_at?.getTime() ?? 0)
      await until(() => wake.payloads.includes(queue), 5_000, 'the wake-up')
    } finally {
      await wake.stop()
    }
    expect(revived).toEqual([[message.id]])
    // Not rejected any more: a second retry changes nothing.
    expect(await broker.retryFailed(message.id)).toEqual({ status: 'not-rejected' })

    healthy = true
    const again = broker.worker({ pollIntervalMs: 50 })
    await again.start()
    await broker.join({ queues: [queue] })
    await again.stop()
    expect(runs).toEqual([21, 21, 21])
    const [done] =
      await db.sql`select state, failure, retries from iddqueue.messages where id = ${message.id}`
    expect(done).toEqual({ state: 'done', failure: null, retries: 0 })
  })

  it('rolls the retry back when a revive hook throws', async () => {
    const broker = db.broker({
      middleware: [
        {
          async revive() {
            throw new Error('results store is read-only')
          },
        },
      ],
    })
    const queue = uniqueQueue()
    const message = await broker.enqueue(broker.message('gone', [], { queue }))
    await db.sql`update iddqueue.messages set state = 'rejected' where id = ${message.id}`
    await expect(broker.retryFailed(message.id)).rejects.toThrow('results store is read-only')
    const [row] = await db.sql`select state from iddqueue.messages where id = ${message.id}`
    expect(row?.state).toBe('rejected')
  })

  it('refuses a message that is missing or not rejected, and a bad id', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const ok = broker.actor('ok', () => 1, { queue })
    const done = await ok.send()
    const queued = await broker.enqueue(broker.message('nobody', [], { queue: uniqueQueue() }))
    const worker = broker.worker()
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()
    expect(await broker.retryFailed(done.id)).toEqual({ status: 'not-rejected' })
    expect(await broker.retryFailed(queued.id)).toEqual({ status: 'not-rejected' })
    expect(await broker.retryFailed(uuid7())).toEqual({ status: 'missing' })
    await expect(broker.retryFailed('nope')).rejects.toSatisfy((error) =>
      InvalidOptionError.isInstance(error),
    )
    const [row] = await db.sql`select state from iddqueue.messages where id = ${done.id}`
    expect(row?.state).toBe('done')
  })

  it('has exactly one winner among ten concurrent retries', async () => {
    const broker = db.broker({ poolSize: 12 })
    const queue = uniqueQueue()
    for (let round = 0; round < 3; round++) {
      const message = await broker.enqueue(broker.message('contended', [round], { queue }))
      await db.sql`update iddqueue.messages set state = 'rejected', retries = 3,
        failure = '{"type":"Error","message":"x","at":"2024-01-01T00:00:00Z","attempt":4}'
        where id = ${message.id}`
      const results = await Promise.all(
        Array.from({ length: 10 }, () => broker.retryFailed(message.id)),
      )
      const statuses = results.map((r) => r.status)
      // No worker runs: the losers wait for the winner and see it retried, never `busy`.
      expect(statuses.filter((s) => s === 'retried')).toHaveLength(1)
      expect(statuses.filter((s) => s === 'not-rejected')).toHaveLength(9)
      const [row] =
        await db.sql`select state, retries from iddqueue.messages where id = ${message.id}`
      expect(row).toEqual({ state: 'queued', retries: 0 })
    }
  })

  it('answers a call waiting behind a winner with not-rejected once the winner commits', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const message = await broker.enqueue(broker.message('raced', [], { queue }))
    await db.sql`update iddqueue.messages set state = 'rejected' where id = ${message.id}`
    let loser: Promise<{ status: string }> | undefined
    await db.sql.begin(async (tx) => {
      // The winner: holds the row and puts the message back in the queue.
      await tx`update iddqueue.messages set state = 'queued' where id = ${message.id}`
      loser = broker.retryFailed(message.id)
      // The signal that the loser is blocked on the winner's row lock.
      await until(
        async () => {
          // This database only: other test files and clusters' users wait on locks too.
          const [row] = await db.sql`select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'`
          return (row?.n ?? 0) >= 1
        },
        10_000,
        'retryFailed to wait for the row',
      )
    })
    expect(await loser).toEqual({ status: 'not-rejected' })
  })

  it('answers busy while another transaction holds the row, then retries once it is released', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const message = await broker.enqueue(broker.message('held', [], { queue }))
    await db.sql`update iddqueue.messages set state = 'rejected' where id = ${message.id}`
    await db.sql.begin(async (tx) => {
      await tx`select id from iddqueue.messages where id = ${message.id} for update`
      expect(await broker.retryFailed(message.id)).toEqual({ status: 'busy' })
    })
    expect(await broker.retryFailed(message.id)).toEqual({ status: 'retried' })
  })
})
