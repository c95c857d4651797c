import { describe, expect, it } from 'vitest'
import { type ActorContext, TimeLimitExceeded } from '../../src/index.js'
import { sleep, uniqueQueue, until } from '../helpers.js'
import { db, FAST, messageRow, stateOf } from './middleware-fixture.js'

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
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const stubborn = broker.actor(
      'stubborn',
      async (label: string, ctx: ActorContext) => {
        running++
        peak = Math.max(peak, running)
        const start = performance.now()
        signals.set(label, ctx.signal)
        if (label === 'slow') await gate // ignores its signal
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
    // The failure is recorded while the handler is still blocked, and the next message waits.
    expect(runs).toEqual([])
    expect(running).toBe(1)
    expect(signals.has('fast')).toBe(false)
    release()

    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(peak).toBe(1)
    expect(runs.map((r) => r.label)).toEqual(['slow', 'fast'])
    const [slowRun, fastRun] = runs as [(typeof runs)[0], (typeof runs)[0]]
    expect(fastRun.start).toBeGreaterThanOrEqual(slowRun.end)
    const slowRow = await messageRow(slow!.id)
    expect(slowRow).toMatchObject({ state: 'rejected', failure: { type: 'TimeLimitExceeded' } })
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
    // A witness with the same limit, started after the others returned: the
    // deadlines share one timer, so when its limit fires, theirs would have.
    let witnessAborted = false
    const witness = broker.actor(
      'witness',
      async (ctx: ActorContext) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()))
        witnessAborted = TimeLimitExceeded.isInstance(ctx.signal.reason)
      },
      { queue, timeLimitMs: 100, maxRetries: 0 },
    )
    await broker.enqueueMany([fine.message(1), fine.message(2), fine.message(3)])
    const worker = broker.worker({ concurrency: 2 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await witness.send()
    await until(() => witnessAborted, 5_000, 'the witness’s time limit')
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(signals).toHaveLength(3)
    expect(signals.map((s) => s.aborted)).toEqual([false, false, false])
  })
})
