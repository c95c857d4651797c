import { describe, expect, it } from 'vitest'
import { type ActorContext, consoleLogger, type EncodedMessage, Retry } from '../../src/index.js'
import { uniqueQueue, until } from '../helpers.js'
import {
  CardDeclined,
  db,
  FAST,
  messageRow,
  PermanentError,
  type SettleSnapshot,
  settleGate,
  settleProbe,
  stateOf,
} from './middleware-fixture.js'

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
