import { describe, expect, it } from 'vitest'
import { type ActorContext, IddqueueError, type IddqueuePlugin } from '../src/index.js'
import { setupDatabase, states, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

class Watchdog extends IddqueueError {}

describe('ProcessEvent.failAttempt, the capability the time limit uses', () => {
  it("lets a third-party plugin end an attempt, abort the handler's signal and keep its slot until it returns", async () => {
    const queue = uniqueQueue()
    let release: (() => void) | undefined
    const started: string[] = []
    const watchdog: IddqueuePlugin = {
      name: 'watchdog',
      middleware: {
        process(event, next) {
          const outcome = next()
          // Fail it once the handler is running, from outside the handler.
          queueMicrotask(() => event.failAttempt(new Watchdog('watchdog fired')))
          return outcome
        },
      },
    }
    const broker = db.broker({ plugins: [watchdog] })
    const aborted: unknown[] = []
    const stuck = broker.actor(
      'stuck',
      async (n: number, ctx: ActorContext) => {
        started.push(String(n))
        ctx.signal.addEventListener('abort', () => aborted.push(ctx.signal.reason))
        // Ignores its signal until the test lets it go.
        await new Promise<void>((resolve) => {
          release = resolve
        })
      },
      { queue, maxRetries: 0 },
    )
    const failures: unknown[] = []
    broker.on('message:failed', ({ error }) => failures.push(error))
    await stuck.send(1)
    await stuck.send(2)
    const worker = broker.worker({ queues: [queue], concurrency: 1 })
    await worker.start()
    await until(() => failures.length === 1, 20_000, 'the first attempt to fail')
    expect(Watchdog.isInstance(failures[0])).toBe(true)
    expect(Watchdog.isInstance(aborted[0])).toBe(true)
    // The failed handler still runs: its slot is kept, so message 2 has not started.
    expect(started).toEqual(['1'])
    expect(worker.stats.running).toBe(1)
    release?.()
    await until(() => failures.length === 2, 20_000, 'the second attempt to fail')
    release?.()
    await until(
      async () => (await states(db.sql, { queue })).rejected === 2,
      20_000,
      'both rejected',
    )
    expect(started).toEqual(['1', '2'])
    await worker.stop()
  })
})
