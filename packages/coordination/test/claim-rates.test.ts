import { type ActorContext, InvalidIdentifierError, InvalidOptionError } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { coordination, RateLimited } from '../src/index.js'
import { rejection, runChild, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

/** Far longer than any test: a worker that waited for its poll would time the test out. */
const NEVER_POLL = 600_000

/**
 * The most messages of `actor` (per first argument) started within any
 * window of `periodMs`, from the `started_at` the claims stored.
 */
async function mostStartedWithin(queue: string, actor: string, periodMs: number) {
  const [row] = await db.sql<{ n: number }[]>`
    select coalesce(max(n), 0)::int as n from (
      select count(*) over (partition by args->>0 order by started_at
               range between current row and ${`${periodMs * 1000 - 1} microseconds`}::interval following) as n
        from iddqueue.messages where queue = ${queue} and actor = ${actor}) w`
  return row?.n as number
}

/** Start times of the queue's messages, in ms, in order. */
async function starts(queue: string): Promise<number[]> {
  const rows = await db.sql<{ ms: number }[]>`
    select (extract(epoch from started_at) * 1000)::float8 as ms
      from iddqueue.messages where queue = ${queue} order by started_at`
  return rows.map((row) => row.ms)
}

describe('rate limits the claim enforces', () => {
  it('3 worker processes: an actor rate, per-key rates and a queue concurrency never exceeded', async () => {
    const queue = uniqueQueue('rates')
    const coord = coordination({ purgeIntervalMs: false, limits: [{ queue, concurrency: 3 }] })
    const broker = db.broker({ plugins: [coord] })
    await db.sql`create table if not exists probe (name text primary key, running int not null, max int not null)`
    const rated = broker.actor('rated', () => {}, { queue, rate: { limit: 5, periodMs: 400 } })
    const rkeyed = broker.actor('rkeyed', (_key: string) => {}, {
      queue,
      rate: { key: (key: string) => key, limit: 2, periodMs: 300 },
    })
    await broker.enqueueMany([
      ...Array.from({ length: 25 }, () => rated.message()),
      ...['a', 'b', 'c'].flatMap((key) => Array.from({ length: 8 }, () => rkeyed.message(key))),
    ])
    const workers = [0, 1, 2].map(() => runChild('limited-worker.mjs', [db.url, queue, 'rate']))
    await broker.join({ queues: [queue], timeoutMs: 120_000 })
    for (const worker of workers) worker.send('stop')
    await Promise.all(workers.map((worker) => worker.done))
    const [states] =
      await db.sql`select count(*)::int as n, count(*) filter (where state = 'done')::int as done
      from iddqueue.messages where queue = ${queue}`
    expect(states).toEqual({ n: 49, done: 49 })
    // From the stored start times, across the processes: never more than the rate in any period.
    // (the backlog keeps every window full: the measure does see the bursts)
    expect(await mostStartedWithin(queue, 'rated', 400)).toBe(5)
    expect(await mostStartedWithin(queue, 'rkeyed', 300)).toBeLessThanOrEqual(2)
    // The queue-wide concurrency (declared on the plugin) held inside the handlers.
    const [probe] = await db.sql`select max from probe where name = 'queue'`
    expect(probe?.max).toBeLessThanOrEqual(3)
    // The windows record what was taken; listLimits shows them.
    const limits = await coord.listLimits()
    expect(limits.find((l) => l.scope === 'actor' && l.name === 'rated')).toMatchObject({
      rate: { limit: 5, periodMs: 400 },
    })
    expect(limits.find((l) => l.scope === 'queue' && l.name === queue)).toMatchObject({
      concurrency: 3,
    })
    // Every place is free again: places are the running messages themselves (decision 0018).
    await until(
      async () =>
        (await coord.listLimits()).find((l) => l.scope === 'queue' && l.name === queue)?.running ===
        0,
      5_000,
      "the queue's places to be free",
    )
  }, 240_000)

  it('a message with more limits than the worker declares is held to all of them', async () => {
    const queue = uniqueQueue('extra')
    // The sender declares a rate the worker's process does not know of.
    const sender = db.broker({ plugins: [coordination({ purgeIntervalMs: false })] })
    const sent = sender.actor('extra', (_key: string) => {}, {
      queue,
      concurrency: { key: (key: string) => key, limit: 5 },
      rate: { limit: 2, periodMs: NEVER_POLL },
    })
    await sender.enqueueMany(Array.from({ length: 6 }, () => sent.message('k')))
    const broker = db.broker({ plugins: [coordination({ purgeIntervalMs: false })] })
    let done = 0
    broker.actor(
      'extra',
      (_key: string) => {
        done++
      },
      { queue, concurrency: { key: (key: string) => key, limit: 5 } },
    )
    let emptyAfterTwo = false
    broker.on('worker:claimed', (event) => {
      if (event.count === 0 && done === 2) emptyAfterTwo = true
    })
    const worker = broker.worker({ queues: [queue], pollIntervalMs: NEVER_POLL })
    await worker.start()
    await until(() => emptyAfterTwo, 10_000, 'a claim that finds the rate window full')
    await worker.stop()
    const rows = await db.sql`select state, count(*)::int as n from iddqueue.messages
      where queue = ${queue} group by state order by state`
    expect(rows).toEqual([
      { state: 'done', n: 2 },
      { state: 'queued', n: 4 },
    ])
  })

  it('an empty claim sleeps until the next free place of a rate window, not the poll interval', async () => {
    const coord = coordination({ purgeIntervalMs: false })
    const broker = db.broker({ plugins: [coord] })
    const queue = uniqueQueue()
    const actor = broker.actor('paced', () => {}, { queue, rate: { limit: 2, periodMs: 300 } })
    await broker.enqueueMany(Array.from({ length: 6 }, () => actor.message()))
    const claims: number[] = []
    broker.on('worker:claimed', (event) => {
      claims.push(event.count)
    })
    const worker = broker.worker({ queues: [queue], concurrency: 4, pollIntervalMs: NEVER_POLL })
    await worker.start()
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await worker.stop()
    const ms = await starts(queue)
    expect(ms).toHaveLength(6)
    // Two per window of 300 ms, from the times the claims stored.
    expect(ms[2]! - ms[0]!).toBeGreaterThanOrEqual(300)
    expect(ms[4]! - ms[2]!).toBeGreaterThanOrEqual(300)
    // Woken at the token times: a few claims, not a spin.
    expect(claims.reduce((sum, n) => sum + n, 0)).toBe(6)
    expect(claims.length).toBeLessThan(20)
    const limit = (await coord.listLimits()).find((l) => l.name === 'paced')
    expect(limit).toMatchObject({ scope: 'actor', rate: { limit: 2, periodMs: 300 } })
  })

  it('an empty claim sleeps until a concurrency place is released', async () => {
    const broker = db.broker({ plugins: [coordination({ purgeIntervalMs: false })] })
    const queue = uniqueQueue()
    let running = 0
    let most = 0
    const actor = broker.actor(
      'one',
      async () => {
        most = Math.max(most, ++running)
        await new Promise((resolve) => setImmediate(resolve))
        running--
      },
      { queue, concurrency: { limit: 1 } },
    )
    await broker.enqueueMany(Array.from({ length: 4 }, () => actor.message()))
    const worker = broker.worker({ queues: [queue], concurrency: 4, pollIntervalMs: NEVER_POLL })
    await worker.start()
    // Every claim after the first came back empty while the place was held:
    // only a release (not the ten-minute poll) can have started the others.
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await worker.stop()
    expect(most).toBe(1)
    const [row] = await db.sql`select count(*) filter (where state = 'done')::int as done
      from iddqueue.messages where queue = ${queue}`
    expect(row?.done).toBe(4)
  })

  it('a key held by RateLimited is claimed again when the hold ends, not at the poll interval', async () => {
    const coord = coordination({ purgeIntervalMs: false })
    const broker = db.broker({ plugins: [coord] })
    const queue = uniqueQueue()
    const attempts: number[] = []
    const actor = broker.actor(
      'held',
      (_key: string, ctx: ActorContext) => {
        attempts.push(ctx.attempt)
        if (attempts.length === 1) throw new RateLimited({ untilMs: 300, key: 'k' })
      },
      { queue, rate: { key: (key: string) => key, limit: 10, periodMs: 1_000 } },
    )
    const message = await actor.send('k')
    const first = await db.sql`select now() as at`
    const worker = broker.worker({ queues: [queue], pollIntervalMs: NEVER_POLL })
    await worker.start()
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await worker.stop()
    const [row] =
      await db.sql`select state, retries, started_at from iddqueue.messages where id = ${message.id}`
    expect(row).toMatchObject({ state: 'done', retries: 0 })
    expect(attempts).toEqual([1, 1])
    expect(Number(row?.started_at) - Number(first[0]?.at)).toBeGreaterThanOrEqual(300)
  })
})

describe('bad input for rate and declared limits', () => {
  it('coordination({ limits }) refuses bad declarations before any SQL', () => {
    const bad: unknown[] = [
      'emails',
      [null],
      [{ queue: 'q', actor: 'a', concurrency: 1 }],
      [{ concurrency: 1 }],
      [{ queue: 'q', concurency: 1 }],
      [{ queue: 'q' }],
      ...[0, -1, Number.NaN, 1.5, '2'].map((concurrency) => [{ queue: 'q', concurrency }]),
      [{ queue: 'q', rate: { limit: 0, periodMs: 1_000 } }],
      [{ queue: 'q', rate: { limit: 10_001, periodMs: 1_000 } }],
      [{ queue: 'q', rate: { limit: 1, periodMs: 0 } }],
      [{ queue: 'q', rate: { limit: 1, periodMs: 1.5 } }],
      [{ queue: 'q', rate: 5 }],
      [{ actor: 'k'.repeat(10_000), concurrency: 1 }],
      [{ queue: 'bad queue!', concurrency: 1 }],
      [
        { queue: 'q', concurrency: 1 },
        { queue: 'q', rate: { limit: 1, periodMs: 1 } },
      ],
    ]
    for (const limits of bad) {
      let error: unknown
      try {
        coordination({ limits: limits as never })
      } catch (thrown) {
        error = thrown
      }
      const typed = InvalidOptionError.isInstance(error) || InvalidIdentifierError.isInstance(error)
      expect(typed, JSON.stringify(limits)).toBe(true)
    }
  })

  it('refuses bad rate options at declaration and bad rate keys at send, storing nothing', async () => {
    const broker = db.broker({
      plugins: [
        coordination({
          purgeIntervalMs: false,
          limits: [{ actor: 'declared', rate: { limit: 1, periodMs: 1 } }],
        }),
      ],
    })
    await broker.ready()
    const queue = uniqueQueue()
    const rates: unknown[] = [
      5,
      { limit: 0, periodMs: 1_000 },
      { limit: -1, periodMs: 1_000 },
      { limit: Number.NaN, periodMs: 1_000 },
      { limit: 1.5, periodMs: 1_000 },
      { limit: 10_001, periodMs: 1_000 },
      { limit: 1, periodMs: 0 },
      { limit: 1, periodMs: -5 },
      { limit: 1, periodMs: 1_000, key: 'not a function' },
      { limit: 1, periodMs: 1_000, burst: 2 },
    ]
    for (const [i, rate] of rates.entries()) {
      expect(() => broker.actor(`bad_${i}`, () => {}, { queue, rate: rate as never })).toThrow(
        InvalidOptionError,
      )
    }
    // The plugin already declares this actor's rate.
    expect(() =>
      broker.actor('declared', () => {}, { queue, rate: { limit: 2, periodMs: 1_000 } }),
    ).toThrow(InvalidOptionError)
    const throwing = broker.actor('throwing', (_n: number) => {}, {
      queue,
      rate: {
        limit: 1,
        periodMs: 1_000,
        key: () => {
          throw new Error('no key')
        },
      },
    })
    const numeric = broker.actor('numeric', (n: number) => n, {
      queue,
      rate: { limit: 1, periodMs: 1_000, key: (n: number) => n as unknown as string },
    })
    const long = broker.actor('long', (_n: number) => {}, {
      queue,
      rate: { limit: 1, periodMs: 1_000, key: () => 'x'.repeat(10_000) },
    })
    const plain = broker.actor('plain', () => {}, { queue })
    for (const send of [
      () => throwing.send(1),
      () => numeric.send(1),
      () => long.send(1),
      () => throwing.sendWithOptions({ args: [1], options: { rateKey: 'x'.repeat(10_000) } }),
      () => throwing.sendWithOptions({ args: [1], options: { rateKey: 42 } }),
      () => plain.sendWithOptions({ args: [], options: { rateKey: 'k' } }),
    ]) {
      const error = await rejection((async () => send())())
      expect(InvalidOptionError.isInstance(error), String(error)).toBe(true)
    }
    const [row] =
      await db.sql`select count(*)::int as n from iddqueue.messages where queue = ${queue}`
    expect(row?.n).toBe(0)
  })

  it('setLimit refuses a rate above 10,000 per period', async () => {
    const coord = coordination({ purgeIntervalMs: false })
    const broker = db.broker({ plugins: [coord] })
    await broker.ready()
    const error = await rejection(
      coord.setLimit({ key: 'too-fast' }, { rate: { limit: 10_001, periodMs: 1_000 } }),
    )
    expect(InvalidOptionError.isInstance(error)).toBe(true)
    expect((await coord.listLimits()).some((limit) => limit.name === 'too-fast')).toBe(false)
  })
})
