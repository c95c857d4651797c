import { describe, expect, it } from 'vitest'
import { type ActorContext, currentMessage, type Message } from '../../src/index.js'
import { sleep, uniqueQueue } from '../helpers.js'
import { barrier, db } from './middleware-fixture.js'

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
