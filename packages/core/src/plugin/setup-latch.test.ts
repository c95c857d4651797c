import { IddqueueError } from '@iddqueue/schema'
import { describe, expect, it } from 'vitest'
import { SetupLatch } from './setup-latch.js'

describe('SetupLatch', () => {
  it('gives a waiter the value once it is set, and current reads it', async () => {
    const latch = new SetupLatch<{ n: number }>('demo()')
    expect(latch.current).toBeUndefined()
    const waiting = latch.wait('read')
    latch.set({ n: 1 })
    await expect(waiting).resolves.toEqual({ n: 1 })
    expect(latch.current).toEqual({ n: 1 })
    await expect(latch.wait('read')).resolves.toEqual({ n: 1 })
  })

  it('fails a waiter with an error naming the plugin and the operation when no setup comes', async () => {
    const latch = new SetupLatch<number>('demo()', 20)
    const error = await latch.wait('purge demos').catch((e: unknown) => e)
    expect(IddqueueError.isInstance(error)).toBe(true)
    expect((error as Error).message).toBe(
      'Could not purge demos: demo() was not set up by a broker within 20 ms; pass it in createBroker({ plugins }) and call broker.ready() (or send, or start a worker) first',
    )
  })

  it('after clear(), waits for the next setup instead of handing out the old one', async () => {
    const latch = new SetupLatch<number>('demo()', 1_000)
    latch.set(1)
    latch.clear()
    expect(latch.current).toBeUndefined()
    const waiting = latch.wait('read')
    latch.set(2)
    await expect(waiting).resolves.toBe(2)
  })
})
