import { describe, expect, it } from 'vitest'
import { type DrainQueuesOptions, drainQueues } from './drain-queues.js'

describe('drainQueues', () => {
  it("is the broker's join, with the same options and outcome", async () => {
    const calls: (DrainQueuesOptions | undefined)[] = []
    const broker = {
      join: async (options?: DrainQueuesOptions) => {
        calls.push(options)
        if (options?.timeoutMs === 1) throw new Error('join timed out')
      },
    }
    await drainQueues(broker, { queues: ['a'], timeoutMs: 5 })
    await drainQueues(broker)
    expect(calls).toEqual([{ queues: ['a'], timeoutMs: 5 }, undefined])
    await expect(drainQueues(broker, { timeoutMs: 1 })).rejects.toThrow('join timed out')
  })
})
