import { describe, expect, it } from 'vitest'
import {
  type ActorContext,
  InvalidPayloadError,
  InvalidStateError,
  UnknownActorError,
  WorkerShutdown,
} from '../src/index.js'
import { setupDatabase, sleep, states, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

describe('worker', () => {
  it('runs each of 1,000 messages exactly once at concurrency 16, never more than 16 at a time', async () => {
    const broker = db.broker()
    const seen = new Map<number, number>()
    let running = 0
    let peak = 0
    const queue = uniqueQueue()
    const work = broker.actor(
      'work',
      async (i: number) => {
        running++
        peak = Math.max(peak, running)
        await sleep(Math.random() * 2)
        seen.set(i, (seen.get(i) ?? 0) + 1)
        running--
      },
      { queue },
    )
    for (let i = 0; i < 1000; i += 250) {
      await broker.enqueueMany(Array.from({ length: 250 }, (_, k) => work.message(i + k)))
    }
    const worker = broker.worker({ concurrency: 16 })
    await worker.start()
    await broker.join({ timeoutMs: 20_000 })
    await worker.stop()
    expect(seen.size).toBe(1000)
    expect([...seen.values()].every((n) => n === 1)).toBe(true)
    expect(peak).toBeLessThanOrEqual(16)
    expect(peak).toBeGreaterThan(1)
    expect(await states(db.sql, { queue })).toEqual({ done: 1000 })
    const [row] = await db.sql`select count(*)::int as n from iddqueue.messages
      where queue = ${queue} and (worker_id <> ${worker.id} or failure is not null or retries <> 0 or attempts <> 1)`
    expect(row?.n).toBe(0)
  })

  it('starts messages by priority, then eta', async () => {
    const broker = db.broker()
    const order: string[] = []
    const record = broker.actor('record', (label: string) => {
      order.push(label)
    })
    await broker.enqueueMany([
      { message: record.message('p5'), priority: 5 },
      { message: record.message('p1-first'), priority: 1 },
      { message: record.message('p3'), priority: 3 },
      { message: record.message('p0'), priority: 0 },
      { message: record.message('p1-second'), priority: 1 },
    ])
    const worker = broker.worker({ concurrency: 1 })
    await worker.start()
    await broker.join()
    await worker.stop()
    expect(order).toEqual(['p0', 'p1-first', 'p1-second', 'p3', 'p5'])
  })

  it('never starts a message before its eta, and wakes for it without waiting for the poll', async () => {
    const broker = db.broker()
    const starts: number[] = []
    const later = broker.actor('later', () => {
      starts.push(Date.now())
    })
    const worker = broker.worker({ concurrency: 2, pollIntervalMs: 30_000 })
    await worker.start()
    const sent = await later.sendWithOptions({ args: [], delayMs: 600 })
    // Far sooner than the 30 s poll: only sleeping until the eta runs it in time.
    await until(() => starts.length === 1, 5_000, 'the delayed message')
    await worker.stop()
    // Both times by PostgreSQL's clock: claimed at or after the eta, never before.
    const [row] = await db.sql`select (started_at >= eta) as after_eta,
      (eta >= enqueued_at + interval '600 milliseconds') as delayed
      from iddqueue.messages where id = ${sent.id}`
    expect(row).toEqual({ after_eta: true, delayed: true })
  })

  it('picks up a message sent to an idle worker through the notification, not the poll', async () => {
    const broker = db.broker()
    let ran = false
    const ping = broker.actor('ping', () => {
      ran = true
    })
    // A poll interval far longer than the wait below: only the wake-up can run it in time.
    const worker = broker.worker({ pollIntervalMs: 300_000 })
    await worker.start()
    await ping.send()
    await until(() => ran, 60_000, 'the ping, woken by its notification')
    await worker.stop()
  })

  it('rejects a message for an unknown actor with a failure record and keeps going', async () => {
    const broker = db.broker()
    let ran = 0
    broker.actor('known', () => {
      ran++
    })
    const ghost = await broker.enqueue(broker.message('ghost', [1], { queue: 'default' }))
    await broker.enqueue(broker.message('known', []))
    const worker = broker.worker({ queues: ['default'] })
    await worker.start()
    await broker.join()
    await worker.stop()
    expect(ran).toBe(1)
    const [row] = await db.sql`select state, failure from iddqueue.messages where id = ${ghost.id}`
    expect(row?.state).toBe('rejected')
    expect(row?.failure.type).toBe(UnknownActorError.name)
    expect(row?.failure.message).toContain('names actor ghost, which this worker does not declare')
  })

  it('rejects a message whose stored arguments are not an array', async () => {
    const broker = db.broker()
    broker.actor('strict', () => {})
    const id = crypto.randomUUID()
    await db.sql`insert into iddqueue.messages (id, queue, actor, args) values (${id}, 'default', 'strict', '{"a":1}')`
    const worker = broker.worker()
    await worker.start()
    await broker.join()
    await worker.stop()
    const [row] = await db.sql`select state, failure from iddqueue.messages where id = ${id}`
    expect(row?.state).toBe('rejected')
    expect(row?.failure.type).toBe(InvalidPayloadError.name)
  })

  it('retries a failing handler with backoff, then records success and clears the failure', async () => {
    const broker = db.broker()
    const attempts: number[] = []
    const flaky = broker.actor(
      'flaky',
      (ctx: ActorContext) => {
        attempts.push(ctx.attempt)
        if (ctx.attempt < 3) throw new TypeError(`attempt ${ctx.attempt} failed`)
        return 'ok'
      },
      { maxRetries: 5, minBackoffMs: 20, maxBackoffMs: 40 },
    )
    const message = await flaky.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join()
    await worker.stop()
    expect(attempts).toEqual([1, 2, 3])
    const [row] =
      await db.sql`select state, retries, failure from iddqueue.messages where id = ${message.id}`
    expect(row).toEqual({ state: 'done', retries: 2, failure: null })
  })

  it('rejects after maxRetries with the last failure: type, text, time and attempt', async () => {
    const broker = db.broker()
    let calls = 0
    const doomed = broker.actor(
      'doomed',
      () => {
        calls++
        throw new RangeError(`no ${calls}`)
      },
      { maxRetries: 2, minBackoffMs: 10, maxBackoffMs: 20 },
    )
    const message = await doomed.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join()
    await worker.stop()
    expect(calls).toBe(3)
    const [row] =
      await db.sql`select state, retries, failure from iddqueue.messages where id = ${message.id}`
    expect(row?.state).toBe('rejected')
    expect(row?.retries).toBe(2)
    expect(row?.failure).toMatchObject({ type: 'RangeError', message: 'no 3', attempt: 3 })
    expect(Date.now() - Date.parse(row?.failure.at)).toBeLessThan(10_000)
    expect(row?.failure.stack).toContain('RangeError: no 3')
  })

  it('registers, heartbeats and deregisters', async () => {
    const broker = db.broker()
    broker.actor('a', () => {}, { queue: 'qa' })
    broker.actor('b', () => {}, { queue: 'qb' })
    const worker = broker.worker({ concurrency: 3, heartbeatIntervalMs: 50, staleAfterMs: 1000 })
    await worker.start()
    const [registered] =
      await db.sql`select host, pid, queues, concurrency, heartbeat_at from iddqueue.workers where id = ${worker.id}`
    expect(registered).toMatchObject({ pid: process.pid, queues: ['qa', 'qb'], concurrency: 3 })
    await until(
      async () => {
        const [later] =
          await db.sql`select heartbeat_at from iddqueue.workers where id = ${worker.id}`
        return later?.heartbeat_at.getTime() > registered?.heartbeat_at.getTime()
      },
      5_000,
      'a heartbeat',
    )
    await worker.stop()
    expect(worker.state).toBe('stopped')
    const gone = await db.sql`select id from iddqueue.workers where id = ${worker.id}`
    expect(gone).toHaveLength(0)
  })

  it('never holds more than concurrency + prefetch messages, counting claims still in flight', async () => {
    const broker = db.broker()
    const gates: (() => void)[] = []
    const queue = uniqueQueue()
    const held = broker.actor(
      'held',
      (_i: number) =>
        new Promise<void>((resolve) => {
          gates.push(resolve)
        }),
      { queue },
    )
    await broker.enqueueMany(Array.from({ length: 30 }, (_, i) => held.message(i)))
    const worker = broker.worker({ concurrency: 4, prefetch: 2, pollIntervalMs: 30_000 })
    await worker.start()
    let finished = 0
    let peak = 0
    while (finished < 30) {
      // Every slot and the prefetch buffer full (or all that is left held):
      // no claim is in flight, since a worker only claims for free room.
      await until(
        () => worker.stats.running + worker.stats.buffered === Math.min(6, 30 - finished),
        5_000,
        'the worker to fill its room',
      )
      // Outcomes not written yet still read `consumed`. Read their count first:
      // every handler is gated, so it can only fall while the query runs.
      const settling = worker.stats.settling
      const consumed = (await states(db.sql, { queue })).consumed ?? 0
      peak = Math.max(peak, consumed - settling)
      expect(worker.stats.running + worker.stats.buffered).toBeLessThanOrEqual(6)
      // Free every slot in one tick: each start from the buffer may start a claim.
      for (const release of gates.splice(0)) {
        release()
        finished++
      }
    }
    await broker.join({ queues: [queue], timeoutMs: 5_000 })
    await worker.stop()
    expect(peak).toBe(6)
    expect(await states(db.sql, { queue })).toEqual({ done: 30 })
  })

  it('on graceful stop returns prefetched messages at once and lets the running one finish', async () => {
    const broker = db.broker()
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const started: number[] = []
    const queue = uniqueQueue()
    const slow = broker.actor(
      'slow',
      async (i: number) => {
        started.push(i)
        await gate
      },
      { queue },
    )
    await broker.enqueueMany(
      Array.from({ length: 10 }, (_, i) => ({ message: slow.message(i), priority: i })),
    )
    const [before] =
      await db.sql`select min(eta) as eta from iddqueue.messages where queue = ${queue}`
    const worker = broker.worker({ concurrency: 1, prefetch: 5 })
    await worker.start()
    await until(
      () => started.length === 1 && worker.stats.buffered > 0,
      5_000,
      'a running and buffered state',
    )
    const stopping = worker.stop()
    await until(
      async () => (await states(db.sql, { queue })).consumed === 1,
      5_000,
      'the prefetched messages to go back',
    )
    expect(started).toEqual([0])
    release()
    await stopping
    expect(await states(db.sql, { queue })).toEqual({ done: 1, queued: 9 })
    const back =
      await db.sql`select worker_id, retries, eta from iddqueue.messages where state = 'queued' and queue = ${queue}`
    expect(back.every((r) => r.worker_id === null && r.retries === 0)).toBe(true)
    expect(back.every((r) => r.eta.getTime() === before?.eta.getTime())).toBe(true)
  })

  it('stops only once a claim in flight has answered, and returns what it claimed', async () => {
    const broker = db.broker({ pollOnly: true })
    const queue = uniqueQueue('slowclaim')
    const ran: string[] = []
    const job = broker.actor('job', () => void ran.push('ran'), { queue })
    // The claim of this queue's row takes half a second in the database, so
    // a stop that does not wait for it resolves long before it answers.
    await db.sql.unsafe(`
      create or replace function slow_claim() returns trigger language plpgsql as
        $$ begin perform pg_sleep(0.5); return new; end $$;
      create trigger slow_claim before update on iddqueue.messages for each row
        when (new.queue = '${queue}' and new.state = 'consumed') execute function slow_claim()`)
    try {
      const message = await job.send()
      const events: string[] = []
      broker.on('worker:claimed', ({ count }) => void events.push(`claimed ${count}`))
      broker.on('worker:stopped', () => void events.push('stopped'))
      const worker = broker.worker({ pollIntervalMs: 50 })
      await worker.start()
      await until(
        async () =>
          (await db.sql`select 1 from pg_stat_activity where wait_event = 'PgSleep'`).length > 0,
        10_000,
        'the claim to run in the database',
      )
      await worker.stop()
      expect(events).toEqual(['claimed 1', 'stopped'])
      expect(ran).toEqual([])
      const [row] =
        await db.sql`select state, retries, worker_id from iddqueue.messages where id = ${message.id}`
      expect(row).toEqual({ state: 'queued', retries: 0, worker_id: null })
      expect(await db.sql`select id from iddqueue.workers where id = ${worker.id}`).toHaveLength(0)
    } finally {
      await db.sql`drop trigger slow_claim on iddqueue.messages`
    }
  })

  it('gives up on a claim past queryTimeoutMs, and takes back its rows once it commits late', async () => {
    const broker = db.broker({ pollOnly: true })
    const queue = uniqueQueue('lateclaim')
    const ran: number[] = []
    const job = broker.actor('job', (ctx: ActorContext) => void ran.push(ctx.attempt), { queue })
    // The first claim of this queue's row takes a second, past the worker's deadline.
    await db.sql.unsafe(`
      create or replace function late_claim() returns trigger language plpgsql as
        $$ begin perform pg_sleep(1); return new; end $$;
      create trigger late_claim before update on iddqueue.messages for each row
        when (new.queue = '${queue}' and new.state = 'consumed' and new.attempts = 1)
        execute function late_claim()`)
    try {
      const message = await job.send()
      const errors: string[] = []
      broker.on('worker:error', ({ error }) => void errors.push((error as Error).message))
      const worker = broker.worker({ pollIntervalMs: 50, queryTimeoutMs: 300 })
      await worker.start()
      await until(() => ran.length === 1, 20_000, 'the message to run after the late claim')
      await worker.stop()
      expect(errors[0]).toBe('PostgreSQL did not answer a statement within 300 ms (queryTimeoutMs)')
      // Claimed by the abandoned statement, taken back (no retry counted),
      // claimed again: two deliveries, one run.
      expect(ran).toEqual([1])
      const [row] =
        await db.sql`select state, retries, attempts, worker_id from iddqueue.messages where id = ${message.id}`
      expect(row).toEqual({ state: 'done', retries: 0, attempts: 2, worker_id: worker.id })
    } finally {
      await db.sql`drop trigger late_claim on iddqueue.messages`
    }
  })

  it('after the shutdown timeout, aborts handlers with WorkerShutdown and returns their messages', async () => {
    const broker = db.broker()
    const reasons: unknown[] = []
    let started = false
    const stubborn = broker.actor(
      'stubborn',
      async (ctx: ActorContext) => {
        started = true
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()))
        reasons.push(ctx.signal.reason)
        await sleep(50)
      },
      { maxRetries: 0, queue: 'stubborn' },
    )
    const message = await stubborn.send()
    const worker = broker.worker({ shutdownTimeoutMs: 200 })
    await worker.start()
    await until(() => started, 5_000, 'the handler to start')
    await worker.stop()
    expect(reasons).toHaveLength(1)
    expect(WorkerShutdown.isInstance(reasons[0])).toBe(true)
    const [row] =
      await db.sql`select state, retries, worker_id from iddqueue.messages where id = ${message.id}`
    expect(row).toEqual({ state: 'queued', retries: 0, worker_id: null })
  })

  it('aborts at once the signal of an actor with notifyShutdown', async () => {
    const broker = db.broker()
    let reason: unknown
    let started = false
    const polite = broker.actor(
      'polite',
      async (ctx: ActorContext) => {
        started = true
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()))
        reason = ctx.signal.reason
        return 'cleaned up'
      },
      { notifyShutdown: true, queue: 'polite' },
    )
    const message = await polite.send()
    const worker = broker.worker({ shutdownTimeoutMs: 10_000 })
    await worker.start()
    // Claimed in the database is not yet started: the claim's rows may still be on their way.
    await until(() => started, 5_000, 'the handler to start')
    await worker.stop()
    expect(WorkerShutdown.isInstance(reason)).toBe(true)
    // Done, not returned: the signal came with the stop, not after the 10 s
    // shutdown timeout (which would have returned the message to the queue).
    const [row] = await db.sql`select state from iddqueue.messages where id = ${message.id}`
    expect(row?.state).toBe('done')
  })

  it('shares a queue between two workers without running any message twice', async () => {
    const a = db.broker()
    const b = db.broker()
    const runs = new Map<number, string[]>()
    const handler = (name: string) => async (i: number) => {
      runs.set(i, [...(runs.get(i) ?? []), name])
      await sleep(1)
    }
    const onA = a.actor('shared', handler('a'))
    b.actor('shared', handler('b'))
    const wa = a.worker({ concurrency: 4 })
    const wb = b.worker({ concurrency: 4 })
    await Promise.all([wa.start(), wb.start()])
    for (let i = 0; i < 600; i += 200)
      await a.enqueueMany(Array.from({ length: 200 }, (_, k) => onA.message(i + k)))
    await a.join({ timeoutMs: 20_000 })
    await Promise.all([wa.stop(), wb.stop()])
    expect(runs.size).toBe(600)
    expect([...runs.values()].every((r) => r.length === 1)).toBe(true)
    const by = [...runs.values()].flat()
    expect(by.filter((n) => n === 'a').length).toBeGreaterThan(0)
    expect(by.filter((n) => n === 'b').length).toBeGreaterThan(0)
  })

  it('refuses bad worker options and a second start', async () => {
    const broker = db.broker()
    expect(() => broker.worker({ concurrency: 0 })).toThrow(
      'Invalid concurrency 0 (worker option): expected an integer of at least 1',
    )
    expect(() => broker.worker({ queues: ['bad queue'] })).toThrow('Invalid queue name "bad queue"')
    expect(() => broker.worker({ staleAfterMs: 100, heartbeatIntervalMs: 100 })).toThrow(
      'at least twice',
    )
    await expect(broker.worker().start()).rejects.toThrow('Worker has no queues')
    broker.actor('x', () => {})
    const worker = broker.worker()
    await worker.start()
    await expect(worker.start()).rejects.toSatisfy(
      (error) => InvalidStateError.isInstance(error) && /already started/.test(String(error)),
    )
    await worker.stop()
  })
})

describe('handler arguments', () => {
  it('passes the context in the last declared parameter, after omitted or undefined arguments, and never to rest parameters', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const seen: unknown[][] = []
    const greet = broker.actor(
      'greet',
      (name: string, title: string | undefined, ctx: ActorContext) => {
        seen.push([name, title, typeof ctx.attempt, ctx.message.actor])
      },
      { queue },
    )
    const sum = broker.actor(
      'sum',
      (...items: number[]) => {
        seen.push(['sum', items])
      },
      { queue },
    )
    await greet.send('ada', undefined)
    await greet.send('bob', 'dr')
    await sum.send(1, 2, 3)
    await sum.send()
    const worker = broker.worker({ concurrency: 1 })
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()
    expect(seen).toEqual([
      ['ada', undefined, 'number', 'greet'],
      ['bob', 'dr', 'number', 'greet'],
      ['sum', [1, 2, 3]],
      ['sum', []],
    ])
  })
})
