import { describe, expect, it } from 'vitest'
import {
  type ActorContext,
  consoleLogger,
  currentMessage,
  type EncodedMessage,
  type Message,
  type Middleware,
  Retry,
  type SettleEvent,
  TimeLimitExceeded,
} from '../src/index.js'
import { setupDatabase, sleep, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

/** Quick retries, for tests that wait on them. */
const FAST = { minBackoffMs: 10, maxBackoffMs: 20 } as const

class PermanentError extends Error {
  override name = 'PermanentError'
}
class CardDeclined extends PermanentError {
  override name = 'CardDeclined'
}

async function messageRow(id: string) {
  const [row] = await db.sql`select state, retries, attempts, failure,
      (extract(epoch from updated_at - started_at) * 1000)::float8 as settled_after_ms
    from iddqueue.messages where id = ${id}`
  return row!
}

async function stateOf(id: string): Promise<string | undefined> {
  const [row] = await db.sql`select state from iddqueue.messages where id = ${id}`
  return row?.state
}

/** A message row as its settle transaction sees it, right after the outcome is written. */
interface SettleSnapshot {
  id: string
  state: string
  retries: number
  /** eta − updated_at: the delay the settle statement stored. */
  delay_ms: number
  eta_ms: number
  started_ms: number
  failure: { type: string; message: string; at: string; stack?: string } | null
}

/** Reads the settled rows inside each settle transaction (a settle hook, as plugins write). */
function settleProbe(snapshots: SettleSnapshot[]): Middleware {
  return {
    async settle(event) {
      const rows = await event.executor.query<SettleSnapshot>(
        `select id, state, retries, failure,
                (extract(epoch from eta - updated_at) * 1000)::float8 as delay_ms,
                (extract(epoch from eta) * 1000)::float8 as eta_ms,
                (extract(epoch from started_at) * 1000)::float8 as started_ms
           from iddqueue.messages where id = any($1::uuid[])`,
        [event.settled.map((s) => s.message.id)],
      )
      snapshots.push(...rows)
    },
  }
}

/**
 * A settle hook that holds open the first settle transaction `matches`
 * picks (after the outcome and follow-up messages are written in it), until
 * `release()`; then fails it once, so it rolls back and the worker writes it
 * again.
 */
function settleGate(matches: (event: SettleEvent) => boolean) {
  let entered!: () => void
  let release!: () => void
  const enteredPromise = new Promise<void>((resolve) => {
    entered = resolve
  })
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let used = false
  const middleware: Middleware = {
    async settle(event) {
      if (used || !matches(event)) return
      used = true
      entered()
      await released
      throw new Error('settle gate: failing this settle transaction once')
    },
  }
  return { middleware, entered: enteredPromise, release }
}

/** Resolves `count` waiters together, once the last one has arrived. */
function barrier(count: number) {
  let arrived = 0
  let open!: () => void
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return () => {
    arrived++
    if (arrived === count) open()
    return opened
  }
}

describe('retry backoff in the database', () => {
  it('stores an eta 100-200 ms after the first failure and 200-400 ms after the second (min 200, max 400)', async () => {
    const snapshots: SettleSnapshot[] = []
    const broker = db.broker({ middleware: [settleProbe(snapshots)] })
    const queue = uniqueQueue()
    const failing = broker.actor(
      'failing',
      () => {
        throw new Error('always')
      },
      { queue, maxRetries: 2, minBackoffMs: 200, maxBackoffMs: 400 },
    )
    const message = await failing.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()

    expect(snapshots.map((s) => [s.id, s.state, s.retries])).toEqual([
      [message.id, 'queued', 1],
      [message.id, 'queued', 2],
      [message.id, 'rejected', 2],
    ])
    const [first, second, last] = snapshots as [SettleSnapshot, SettleSnapshot, SettleSnapshot]
    expect(first.delay_ms).toBeGreaterThanOrEqual(100)
    expect(first.delay_ms).toBeLessThanOrEqual(200)
    expect(second.delay_ms).toBeGreaterThanOrEqual(200)
    expect(second.delay_ms).toBeLessThanOrEqual(400)
    // No retry started before its eta.
    expect(second.started_ms).toBeGreaterThanOrEqual(first.eta_ms)
    expect(last.started_ms).toBeGreaterThanOrEqual(second.eta_ms)
    expect(await messageRow(message.id)).toMatchObject({
      state: 'rejected',
      retries: 2,
      attempts: 3,
    })
  })
})

describe('throws', () => {
  it('rejects an error of a listed class (or a subclass) after one attempt; other errors still retry', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const attempts: string[] = []
    const charge = broker.actor(
      'charge',
      (kind: string, ctx: ActorContext) => {
        attempts.push(`${kind}#${ctx.attempt}`)
        if (kind === 'declined') throw new PermanentError('card declined')
        if (kind === 'subclass') throw new CardDeclined('card declined: stolen')
        if (ctx.attempt === 1) throw new Error('gateway timeout')
        return 'charged'
      },
      { queue, throws: [PermanentError], maxRetries: 3, ...FAST },
    )
    const declined = await charge.send('declined')
    const subclass = await charge.send('subclass')
    const flaky = await charge.send('flaky')
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()

    expect(attempts.sort()).toEqual(['declined#1', 'flaky#1', 'flaky#2', 'subclass#1'])
    expect(await messageRow(declined.id)).toMatchObject({
      state: 'rejected',
      retries: 0,
      attempts: 1,
      failure: { type: 'PermanentError', message: 'card declined', attempt: 1 },
    })
    expect(await messageRow(subclass.id)).toMatchObject({
      state: 'rejected',
      retries: 0,
      attempts: 1,
      failure: { type: 'CardDeclined', message: 'card declined: stolen' },
    })
    expect(await messageRow(flaky.id)).toMatchObject({
      state: 'done',
      retries: 1,
      attempts: 2,
      failure: null,
    })
  })
})

describe('Retry', () => {
  it('with delayMs retries at failure time + delayMs, whatever the backoff', async () => {
    const snapshots: SettleSnapshot[] = []
    const broker = db.broker({ middleware: [settleProbe(snapshots)] })
    const queue = uniqueQueue()
    const starts: number[] = []
    // The default backoff (15 s) would time the join out: only the Retry delay can pass.
    const polite = broker.actor(
      'polite',
      (ctx: ActorContext) => {
        starts.push(Date.now())
        if (ctx.attempt === 1) throw new Retry({ delayMs: 300 })
        return 'ok'
      },
      { queue },
    )
    const message = await polite.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()

    expect(snapshots.map((s) => [s.state, s.retries])).toEqual([
      ['queued', 1],
      ['done', 1],
    ])
    const retried = snapshots[0]!
    // The eta is exactly 300 ms after the failure was recorded (updated_at, the same now()).
    expect(retried.delay_ms).toBeCloseTo(300, 3)
    expect(retried.failure).toMatchObject({ type: 'Retry', message: 'Retry requested in 300 ms' })
    // failure.at is the worker's clock before the settle transaction began, so the
    // eta is never earlier than 300 ms after it (1 ms for the rounding of `at`).
    const failedAt = Date.parse(retried.failure!.at)
    expect(retried.eta_ms - failedAt).toBeGreaterThanOrEqual(299)
    expect(snapshots[1]!.started_ms).toBeGreaterThanOrEqual(retried.eta_ms)
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(290)
    expect(await messageRow(message.id)).toMatchObject({ state: 'done', failure: null })
  })

  it('counts against maxRetries', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    let calls = 0
    const insistent = broker.actor(
      'insistent',
      () => {
        calls++
        throw new Retry({ delayMs: 20 })
      },
      { queue, maxRetries: 2 },
    )
    const message = await insistent.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(calls).toBe(3)
    expect(await messageRow(message.id)).toMatchObject({
      state: 'rejected',
      retries: 2,
      attempts: 3,
      failure: { type: 'Retry', message: 'Retry requested in 20 ms', attempt: 3 },
    })
  })

  it('without delayMs uses the backoff', async () => {
    const snapshots: SettleSnapshot[] = []
    const broker = db.broker({ middleware: [settleProbe(snapshots)] })
    const queue = uniqueQueue()
    const again = broker.actor(
      'again',
      (ctx: ActorContext) => {
        if (ctx.attempt === 1) throw new Retry()
      },
      { queue, minBackoffMs: 200, maxBackoffMs: 200 },
    )
    await again.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(snapshots.map((s) => s.state)).toEqual(['queued', 'done'])
    expect(snapshots[0]!.delay_ms).toBeGreaterThanOrEqual(100)
    expect(snapshots[0]!.delay_ms).toBeLessThanOrEqual(200)
    expect(snapshots[0]!.failure).toMatchObject({ type: 'Retry', message: 'Retry requested' })
  })
})

describe('retryWhen', () => {
  it('decides instead of maxRetries, with the retries so far and the error', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const asked: [number, string][] = []
    const picky = broker.actor(
      'picky',
      (ctx: ActorContext) => {
        throw new Error(ctx.attempt < 3 ? `transient glitch ${ctx.attempt}` : 'fatal')
      },
      {
        queue,
        maxRetries: 0,
        ...FAST,
        retryWhen: (retries, error) => {
          asked.push([retries, (error as Error).message])
          return error instanceof Error && error.message.includes('transient')
        },
      },
    )
    let strictCalls = 0
    const strict = broker.actor(
      'strict',
      () => {
        strictCalls++
        throw new Error('transient, but retryWhen says no')
      },
      { queue, maxRetries: 5, ...FAST, retryWhen: () => false },
    )
    const pickyMessage = await picky.send()
    const strictMessage = await strict.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()

    expect(asked).toEqual([
      [0, 'transient glitch 1'],
      [1, 'transient glitch 2'],
      [2, 'fatal'],
    ])
    expect(await messageRow(pickyMessage.id)).toMatchObject({
      state: 'rejected',
      retries: 2,
      attempts: 3,
      failure: { message: 'fatal', attempt: 3 },
    })
    expect(strictCalls).toBe(1)
    expect(await messageRow(strictMessage.id)).toMatchObject({ state: 'rejected', retries: 0 })
  })

  it('does not override throws', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    let calls = 0
    const stubborn = broker.actor(
      'stubborn',
      () => {
        calls++
        throw new PermanentError('never retry me')
      },
      { queue, ...FAST, throws: [PermanentError], retryWhen: () => true },
    )
    const message = await stubborn.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(calls).toBe(1)
    expect(await messageRow(message.id)).toMatchObject({ state: 'rejected', retries: 0 })
  })
})

describe('onRetryExhausted', () => {
  it('sends (message, { retries, maxRetries }) once, after the last failure, in the settle transaction of the rejection', async () => {
    const gate = settleGate((event) => event.settled.some((s) => s.state === 'rejected'))
    const broker = db.broker({ middleware: [gate.middleware], logger: consoleLogger('silent') })
    const queue = uniqueQueue()
    const received: [EncodedMessage, unknown][] = []
    broker.actor(
      'exhausted_actor',
      (message: EncodedMessage, info: { retries: number; maxRetries: number }) => {
        received.push([message, info])
      },
      { queue },
    )
    let calls = 0
    const doomed = broker.actor(
      'doomed',
      (_order: number) => {
        calls++
        throw new Error(`failure ${calls}`)
      },
      { queue, maxRetries: 2, ...FAST, onRetryExhausted: 'exhausted_actor' },
    )
    const message = await doomed.send(42)
    const followUps = async () => {
      const [row] = await db.sql`select
          (select state from iddqueue.messages where id = ${message.id}) as state,
          (select count(*)::int from iddqueue.messages
            where queue = ${queue} and actor = 'exhausted_actor') as follow_ups`
      return row
    }
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()

    await gate.entered
    try {
      // The last failure's settle transaction has written the rejection and the
      // follow-up, and is still open: neither is visible.
      expect(calls).toBe(3)
      expect(await followUps()).toEqual({ state: 'consumed', follow_ups: 0 })
      expect(received).toEqual([])
    } finally {
      gate.release()
    }

    await until(async () => (await stateOf(message.id)) === 'rejected', 5_000, 'the rejection')
    expect((await followUps())?.follow_ups).toBe(1)
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()

    expect(received).toEqual([
      [
        expect.objectContaining({ id: message.id, actor: 'doomed', queue, args: [42] }),
        { retries: 2, maxRetries: 2 },
      ],
    ])
    expect(await messageRow(message.id)).toMatchObject({
      state: 'rejected',
      retries: 2,
      attempts: 3,
      failure: { message: 'failure 3' },
    })
  })

  it('is not sent for a final failure (throws) or a success after retries', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    let exhausted = 0
    broker.actor(
      'exhausted_actor',
      () => {
        exhausted++
      },
      { queue },
    )
    const flaky = broker.actor(
      'flaky',
      (kind: string, ctx: ActorContext) => {
        if (kind === 'permanent') throw new PermanentError('no')
        if (ctx.attempt < 3) throw new Error('not yet')
      },
      {
        queue,
        maxRetries: 2,
        ...FAST,
        throws: [PermanentError],
        onRetryExhausted: 'exhausted_actor',
      },
    )
    await flaky.send('permanent')
    await flaky.send('eventually')
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(exhausted).toBe(0)
    const [row] = await db.sql`select count(*)::int as n from iddqueue.messages
      where queue = ${queue} and actor = 'exhausted_actor'`
    expect(row?.n).toBe(0)
  })
})

describe('age limit', () => {
  it('rejects a message older than maxAgeMs without running it', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const ran: string[] = []
    const fresh = broker.actor(
      'fresh',
      (label: string) => {
        ran.push(label)
      },
      { queue, maxAgeMs: 100 },
    )
    const stale = await fresh.send('stale')
    await sleep(200)
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    // A message sent now is young enough: the limit is per message.
    const young = await fresh.send('young')
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()

    expect(ran).toEqual(['young'])
    const row = await messageRow(stale.id)
    expect(row).toMatchObject({
      state: 'rejected',
      retries: 0,
      attempts: 1,
      failure: { type: 'AgeLimitExceeded', attempt: 1 },
    })
    expect(row.failure.message).toContain('over maxAgeMs 100 of actor fresh')
    expect(await stateOf(young.id)).toBe('done')
  })

  it('measures from the first enqueue: a retry that waited past maxAgeMs is rejected unrun', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    let calls = 0
    // The backoff is 300-600 ms, past the 250 ms age limit.
    const slowRetry = broker.actor(
      'slow_retry',
      () => {
        calls++
        throw new Error('first attempt fails')
      },
      { queue, maxAgeMs: 250, maxRetries: 5, minBackoffMs: 600, maxBackoffMs: 600 },
    )
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    const message = await slowRetry.send()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(calls).toBe(1)
    expect(await messageRow(message.id)).toMatchObject({
      state: 'rejected',
      retries: 1,
      attempts: 2,
      failure: { type: 'AgeLimitExceeded', attempt: 2 },
    })
  })
})

describe('time limit', () => {
  it('aborts the signal with TimeLimitExceeded and fails the attempt, which is retried and then rejected', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const aborts: { attempt: number; afterMs: number; reason: unknown }[] = []
    const slowpoke = broker.actor(
      'slowpoke',
      async (ctx: ActorContext) => {
        const started = performance.now()
        await new Promise<void>((_resolve, reject) => {
          ctx.signal.addEventListener(
            'abort',
            () => {
              aborts.push({
                attempt: ctx.attempt,
                afterMs: performance.now() - started,
                reason: ctx.signal.reason,
              })
              reject(ctx.signal.reason)
            },
            { once: true },
          )
        })
      },
      { queue, timeLimitMs: 100, maxRetries: 1, ...FAST },
    )
    const message = await slowpoke.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()

    expect(aborts.map((a) => a.attempt)).toEqual([1, 2])
    for (const abort of aborts) {
      expect(TimeLimitExceeded.isInstance(abort.reason)).toBe(true)
      expect(abort.afterMs).toBeGreaterThanOrEqual(95)
      expect(abort.afterMs).toBeLessThan(400)
    }
    const row = await messageRow(message.id)
    expect(row).toMatchObject({
      state: 'rejected',
      retries: 1,
      attempts: 2,
      failure: { type: 'TimeLimitExceeded', attempt: 2 },
    })
    expect(row.failure.message).toContain('time limit of 100 ms')
  })

  it('fails a handler that ignores its signal at the limit, but starts nothing else until it returns (concurrency 1)', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const runs: { label: string; start: number; end: number }[] = []
    const signals = new Map<string, AbortSignal>()
    let running = 0
    let peak = 0
    const stubborn = broker.actor(
      'stubborn',
      async (label: string, ctx: ActorContext) => {
        running++
        peak = Math.max(peak, running)
        const start = performance.now()
        signals.set(label, ctx.signal)
        if (label === 'slow') await sleep(400)
        running--
        runs.push({ label, start, end: performance.now() })
      },
      { queue, timeLimitMs: 100, maxRetries: 0 },
    )
    const [slow, fast] = await broker.enqueueMany([
      stubborn.message('slow'),
      stubborn.message('fast'),
    ])
    const worker = broker.worker({ concurrency: 1, pollIntervalMs: 50 })
    await worker.start()

    await until(async () => (await stateOf(slow!.id)) === 'rejected', 5_000, 'the time limit')
    // The failure is recorded while the handler is still sleeping, and the next message waits.
    expect(runs).toEqual([])
    expect(running).toBe(1)
    expect(await stateOf(fast!.id)).not.toBe('done')

    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(peak).toBe(1)
    expect(runs.map((r) => r.label)).toEqual(['slow', 'fast'])
    const [slowRun, fastRun] = runs as [(typeof runs)[0], (typeof runs)[0]]
    expect(slowRun.end - slowRun.start).toBeGreaterThanOrEqual(395)
    expect(fastRun.start).toBeGreaterThanOrEqual(slowRun.end)
    const slowRow = await messageRow(slow!.id)
    expect(slowRow).toMatchObject({ state: 'rejected', failure: { type: 'TimeLimitExceeded' } })
    // Recorded at the limit (about 100 ms after the claim), not when the handler returned.
    expect(slowRow.settled_after_ms).toBeLessThan(300)
    expect(signals.get('slow')?.aborted).toBe(true)
    expect(TimeLimitExceeded.isInstance(signals.get('slow')?.reason)).toBe(true)
    expect(signals.get('fast')?.aborted).toBe(false)
    expect(await stateOf(fast!.id)).toBe('done')
  })
})

describe('signals on success', () => {
  it('are never aborted: not by the time limit once the handler returned, nor by a later graceful stop', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const signals: AbortSignal[] = []
    const fine = broker.actor(
      'fine',
      async (n: number, ctx: ActorContext) => {
        signals.push(ctx.signal)
        await sleep(5)
        return n
      },
      { queue, timeLimitMs: 100, notifyShutdown: true },
    )
    await broker.enqueueMany([fine.message(1), fine.message(2), fine.message(3)])
    const worker = broker.worker({ concurrency: 2 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await sleep(150)
    await worker.stop()
    expect(signals).toHaveLength(3)
    expect(signals.map((s) => s.aborted)).toEqual([false, false, false])
  })
})

describe('callbacks', () => {
  it('onSuccess receives (message, result) once per success; onFailure (message, { type, message }) on every failed attempt', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const successes: [EncodedMessage, unknown][] = []
    const failures: [EncodedMessage, { type: string; message: string }][] = []
    broker.actor(
      'ok_cb',
      (message: EncodedMessage, result: unknown) => {
        successes.push([message, result])
      },
      { queue },
    )
    broker.actor(
      'fail_cb',
      (message: EncodedMessage, error: { type: string; message: string }) => {
        failures.push([message, error])
      },
      { queue },
    )
    const work = broker.actor(
      'work',
      (n: number, ctx: ActorContext) => {
        if (n === 3) throw new RangeError(`bad ${ctx.attempt}`)
        if (n === 2 && ctx.attempt === 1) throw new Error('first try')
        return { doubled: n * 2 }
      },
      { queue, onSuccess: 'ok_cb', onFailure: 'fail_cb', maxRetries: 2, ...FAST },
    )
    const [one, two, three] = [await work.send(1), await work.send(2), await work.send(3)]
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()

    const byId = (id: string) => (entry: [EncodedMessage, unknown]) => entry[0].id === id
    expect(successes).toHaveLength(2)
    expect(successes.filter(byId(one.id))).toEqual([
      [expect.objectContaining({ id: one.id, actor: 'work', queue, args: [1] }), { doubled: 2 }],
    ])
    expect(successes.filter(byId(two.id))).toEqual([
      [expect.objectContaining({ id: two.id, args: [2] }), { doubled: 4 }],
    ])
    expect(failures).toHaveLength(4)
    expect(failures.filter(byId(two.id)).map((f) => f[1])).toEqual([
      { type: 'Error', message: 'first try' },
    ])
    expect(failures.filter(byId(three.id)).map((f) => f[1])).toEqual([
      { type: 'RangeError', message: 'bad 1' },
      { type: 'RangeError', message: 'bad 2' },
      { type: 'RangeError', message: 'bad 3' },
    ])
    expect(failures.filter(byId(three.id))[0]![0]).toMatchObject({ actor: 'work', args: [3] })
    const rows = await db.sql`select actor, state, count(*)::int as n from iddqueue.messages
      where queue = ${queue} group by actor, state order by actor, state`
    expect(rows).toEqual([
      { actor: 'fail_cb', state: 'done', n: 4 },
      { actor: 'ok_cb', state: 'done', n: 2 },
      { actor: 'work', state: 'done', n: 2 },
      { actor: 'work', state: 'rejected', n: 1 },
    ])
  })

  it('are written in the same transaction as the outcome: rows exist exactly when it is recorded', async () => {
    const isFor = (id: () => string | undefined) => (event: SettleEvent) =>
      event.settled.some((s) => s.message.id === id())
    let successId: string | undefined
    let failureId: string | undefined
    const successGate = settleGate(isFor(() => successId))
    const failureGate = settleGate(isFor(() => failureId))
    const broker = db.broker({
      middleware: [successGate.middleware, failureGate.middleware],
      logger: consoleLogger('silent'),
    })
    const queue = uniqueQueue()
    let okCalls = 0
    let failCalls = 0
    broker.actor(
      'ok_cb',
      () => {
        okCalls++
      },
      { queue },
    )
    broker.actor(
      'fail_cb',
      () => {
        failCalls++
      },
      { queue },
    )
    const work = broker.actor(
      'work',
      (fail: boolean, ctx: ActorContext) => {
        if (fail && ctx.attempt === 1) throw new Error('retry me')
        return 'ok'
      },
      { queue, onSuccess: 'ok_cb', onFailure: 'fail_cb', maxRetries: 1, ...FAST },
    )
    const snapshot = async (id: string) => {
      const [row] = await db.sql`select
          (select state from iddqueue.messages where id = ${id}) as state,
          (select retries from iddqueue.messages where id = ${id}) as retries,
          (select count(*)::int from iddqueue.messages
            where queue = ${queue} and actor in ('ok_cb', 'fail_cb')) as callbacks`
      return row
    }
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()

    successId = (await work.send(false)).id
    await successGate.entered
    try {
      expect(await snapshot(successId)).toEqual({ state: 'consumed', retries: 0, callbacks: 0 })
    } finally {
      successGate.release()
    }
    await until(async () => (await stateOf(successId!)) === 'done', 5_000, 'the success')
    expect((await snapshot(successId))?.callbacks).toBe(1)

    failureId = (await work.send(true)).id
    await failureGate.entered
    try {
      expect(await snapshot(failureId)).toEqual({ state: 'consumed', retries: 0, callbacks: 1 })
    } finally {
      failureGate.release()
    }
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    // One fail_cb for the failed attempt, one ok_cb for each success: nothing twice.
    expect(await snapshot(failureId)).toEqual({ state: 'done', retries: 1, callbacks: 3 })
    expect([okCalls, failCalls]).toEqual([2, 1])
  })

  it('a result that is not JSON (a BigInt) rejects the message, naming the path; the worker keeps going', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    let okCalls = 0
    broker.actor(
      'ok_cb',
      () => {
        okCalls++
      },
      { queue },
    )
    const huge = broker.actor('huge', () => 10n ** 20n, { queue, onSuccess: 'ok_cb', ...FAST })
    const plain = broker.actor('plain', () => 'fine', { queue })
    const message = await huge.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    const after = await plain.send()
    await broker.join({ timeoutMs: 5_000 })
    expect(worker.state).toBe('running')
    await worker.stop()

    const row = await messageRow(message.id)
    expect(row).toMatchObject({
      state: 'rejected',
      retries: 0,
      attempts: 1,
      failure: { type: 'InvalidPayloadError' },
    })
    expect(row.failure.message).toMatch(
      /^The result of actor huge cannot be sent to its onSuccess actor ok_cb \(as args\[1\]\): .*args\[1\] is a BigInt/,
    )
    expect(okCalls).toBe(0)
    expect(await stateOf(after.id)).toBe('done')
  })

  it('onFailure gets the same sanitised type and text as the stored failure, and the attempt is still retried', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const reports: { type: string; message: string }[] = []
    broker.actor(
      'fail_cb',
      (_message: EncodedMessage, error: { type: string; message: string }) => {
        reports.push(error)
      },
      { queue },
    )
    const bad = broker.actor(
      'bad',
      (kind: string, ctx: ActorContext) => {
        if (ctx.attempt > 1) return 'ok'
        if (kind === 'nul') throw new Error('nul \u0000 and lone \ud800 here')
        throw { code: 42 }
      },
      { queue, onFailure: 'fail_cb', maxRetries: 1, ...FAST },
    )
    const nul = await bad.send('nul')
    const object = await bad.send('object')
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(reports).toHaveLength(2)
    expect(reports).toContainEqual({ type: 'Error', message: 'nul \ufffd and lone \ufffd here' })
    expect(reports).toContainEqual({ type: 'object', message: '{"code":42}' })
    expect(await messageRow(nul.id)).toMatchObject({ state: 'done', retries: 1 })
    expect(await messageRow(object.id)).toMatchObject({ state: 'done', retries: 1 })
  })
})

describe('currentMessage()', () => {
  it('is the running message in the handler and its nested async calls, and undefined outside', async () => {
    const broker = db.broker({ currentMessage: true })
    const queue = uniqueQueue()
    const seen: Record<string, string | undefined> = {}
    const inFailedListener: (Message | undefined)[] = []
    broker.on('message:failed', () => {
      inFailedListener.push(currentMessage())
    })
    const nested = async () => {
      await sleep(5)
      return currentMessage()?.id
    }
    const probe = broker.actor(
      'probe',
      async (label: string, ctx: ActorContext) => {
        seen[`${label}:sync`] = currentMessage()?.id
        await new Promise<void>((resolve) =>
          setTimeout(() => {
            seen[`${label}:timeout`] = currentMessage()?.id
            resolve()
          }, 5),
        )
        seen[`${label}:nested`] = await nested()
        seen[`${label}:ctx`] = ctx.message.id
        if (label === 'fails') throw new Error('handler failure')
      },
      { queue, maxRetries: 0 },
    )
    expect(currentMessage()).toBeUndefined()
    const fails = await probe.send('fails')
    const worker = broker.worker({ concurrency: 1 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    expect(currentMessage()).toBeUndefined()
    const next = await probe.send('next')
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()

    expect(seen).toEqual({
      'fails:sync': fails.id,
      'fails:timeout': fails.id,
      'fails:nested': fails.id,
      'fails:ctx': fails.id,
      'next:sync': next.id,
      'next:timeout': next.id,
      'next:nested': next.id,
      'next:ctx': next.id,
    })
    expect(inFailedListener).toEqual([undefined])
    expect(currentMessage()).toBeUndefined()
  })

  it('gives each of 4 parallel handlers its own message across interleaved awaits', async () => {
    const broker = db.broker({ currentMessage: true })
    const queue = uniqueQueue()
    const arrive = barrier(4)
    const mismatches: string[] = []
    let checks = 0
    const parallel = broker.actor(
      'parallel',
      async (i: number, ctx: ActorContext) => {
        await arrive()
        for (let step = 0; step < 10; step++) {
          await sleep(Math.random() * 4)
          await Promise.resolve()
          checks++
          if (currentMessage()?.id !== ctx.message.id) mismatches.push(`${i}@${step}`)
        }
      },
      { queue },
    )
    await broker.enqueueMany([0, 1, 2, 3].map((i) => parallel.message(i)))
    const worker = broker.worker({ concurrency: 4 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(checks).toBe(40)
    expect(mismatches).toEqual([])
  })

  it('stays undefined inside handlers by default (opt-in), and with { currentMessage: false }', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const seen: (Message | undefined)[] = []
    const off = broker.actor(
      'off',
      async () => {
        seen.push(currentMessage())
        await sleep(1)
        seen.push(currentMessage())
      },
      { queue },
    )
    await off.send()
    const worker = broker.worker()
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(seen).toEqual([undefined, undefined])
  })
})

describe('failure metadata', () => {
  it('keeps exactly 2,000 characters of the error text', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    // 1,999 characters then an emoji: the cut falls inside its surrogate pair.
    const texts: Record<string, string> = {
      long: 'x'.repeat(5_000),
      exact: 'y'.repeat(2_000),
      pair: `${'z'.repeat(1_999)}\u{1F600}tail`,
    }
    const verbose = broker.actor(
      'verbose',
      (kind: string) => {
        throw new Error(texts[kind])
      },
      { queue, maxRetries: 0 },
    )
    const sent = await broker.enqueueMany(Object.keys(texts).map((kind) => verbose.message(kind)))
    const worker = broker.worker()
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    const [long, exact, pair] = await Promise.all(sent.map((m) => messageRow(m.id)))
    expect(long?.failure.message).toBe('x'.repeat(2_000))
    expect(exact?.failure.message).toBe('y'.repeat(2_000))
    expect(pair?.failure.message).toBe(`${'z'.repeat(1_999)}\ufffd`)
    expect(pair?.failure.message).toHaveLength(2_000)
  })

  it('stores an error text with \\u0000 and an unpaired surrogate, sanitised, without failing the rest of its settle batch', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const arrive = barrier(3)
    const mixed = broker.actor(
      'mixed',
      async (kind: string) => {
        // All three finish together, so their outcomes go out in one settle statement.
        await arrive()
        if (kind === 'nasty') {
          const error = new Error('bad \u0000 byte and lone \udc00 surrogate')
          error.name = 'Nasty\u0000Error'
          throw error
        }
        if (kind === 'plain') throw new Error('plain failure')
        return 'ok'
      },
      { queue, maxRetries: 0 },
    )
    const sent = await broker.enqueueMany(['nasty', 'plain', 'ok'].map((k) => mixed.message(k)))
    const worker = broker.worker({ concurrency: 3 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    const rows = await db.sql`select id, state, failure, updated_at from iddqueue.messages
      where id = any(${sent.map((m) => m.id)}::uuid[])`
    const byId = new Map(rows.map((r) => [r.id, r]))
    const [nasty, plain, ok] = sent.map((m) => byId.get(m.id)!)
    expect(nasty).toMatchObject({
      state: 'rejected',
      failure: { type: 'Nasty\ufffdError', message: 'bad \ufffd byte and lone \ufffd surrogate' },
    })
    expect(nasty?.failure.stack).toContain('bad \ufffd byte')
    expect(nasty?.failure.stack).not.toContain('\u0000')
    expect(plain).toMatchObject({ state: 'rejected', failure: { message: 'plain failure' } })
    expect(ok).toMatchObject({ state: 'done', failure: null })
    // One settle statement wrote all three: they share its now().
    expect(new Set(rows.map((r) => r.updated_at.getTime())).size).toBe(1)
  })

  it('records a thrown non-Error by its typeof and its text, without a stack', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const thrown: Record<string, unknown> = {
      string: 'just a string',
      object: { code: 42, reason: 'quota' },
      number: 7,
      undefined: undefined,
    }
    const odd = broker.actor(
      'odd',
      (kind: string) => {
        throw thrown[kind]
      },
      { queue, maxRetries: 0 },
    )
    const sent = await broker.enqueueMany(Object.keys(thrown).map((kind) => odd.message(kind)))
    const worker = broker.worker()
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    const failures = await Promise.all(sent.map(async (m) => (await messageRow(m.id)).failure))
    expect(failures).toEqual([
      { type: 'string', message: 'just a string', at: expect.any(String), attempt: 1 },
      {
        type: 'object',
        message: '{"code":42,"reason":"quota"}',
        at: expect.any(String),
        attempt: 1,
      },
      { type: 'number', message: '7', at: expect.any(String), attempt: 1 },
      { type: 'undefined', message: 'undefined', at: expect.any(String), attempt: 1 },
    ])
  })

  it('stores the stack with a failed attempt and clears the failure on success', async () => {
    const snapshots: SettleSnapshot[] = []
    const broker = db.broker({ middleware: [settleProbe(snapshots)] })
    const queue = uniqueQueue()
    const recovering = broker.actor(
      'recovering',
      function recovering(ctx: ActorContext) {
        if (ctx.attempt === 1) throw new TypeError('first attempt breaks')
        return 'ok'
      },
      { queue, maxRetries: 1, ...FAST },
    )
    const message = await recovering.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(snapshots.map((s) => s.state)).toEqual(['queued', 'done'])
    const failed = snapshots[0]!.failure!
    expect(failed).toMatchObject({ type: 'TypeError', message: 'first attempt breaks', attempt: 1 })
    expect(failed.stack).toMatch(/^TypeError: first attempt breaks\n\s+at \S*recovering/)
    expect(failed.stack).toContain('middleware.test.ts')
    expect(await messageRow(message.id)).toMatchObject({ state: 'done', retries: 1, failure: null })
  })
})
