import { describe, expect, it } from 'vitest'
import type { DrainQueuesOptions } from './drain-queues.js'
import { drainWithWorker } from './drain-with-worker.js'

function recordingBroker(joinFails = false) {
  const calls: unknown[] = []
  return {
    calls,
    worker: (options: unknown) => {
      calls.push(['worker', options])
      return {
        start: async () => void calls.push('start'),
        stop: async () => void calls.push('stop'),
      }
    },
    join: async (options?: DrainQueuesOptions) => {
      calls.push(['join', options])
      if (joinFails) throw new Error('join timed out')
    },
  }
}

describe('drainWithWorker', () => {
  it('starts a worker on the queues, joins them, and stops it', async () => {
    const broker = recordingBroker()
    await drainWithWorker(broker, { queues: ['a'], concurrency: 2 })
    expect(broker.calls).toEqual([
      ['worker', { queues: ['a'], concurrency: 2, pollIntervalMs: 50 }],
      'start',
      ['join', { queues: ['a'], timeoutMs: 20_000 }],
      'stop',
    ])
  })

  it('stops the worker when the join fails, and rejects with its error', async () => {
    const broker = recordingBroker(true)
    await expect(drainWithWorker(broker)).rejects.toThrow('join timed out')
    expect(broker.calls).toEqual([
      ['worker', { concurrency: 4, pollIntervalMs: 50 }],
      'start',
      ['join', { timeoutMs: 20_000 }],
      'stop',
    ])
  })
})
