import { type ChildProcess, spawn } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

/** A busy loop in another process, so the worker's claims and handlers compete for the CPU. */
function busyLoop(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' })
}

let busy: ChildProcess[] = []
afterEach(() => {
  for (const child of busy) child.kill('SIGKILL')
  busy = []
})

/** Priorities in the order their handlers started, for `count` messages claimed from a backlog. */
const PRIORITIES = [2_147_483_647, 100, 0, -5, 7, 100, 2_147_483_647, 3, -2_147_483_647, 50]

describe('priority order under load', () => {
  it('starts everything a worker claimed in priority order, whatever order its claims answer in', async () => {
    busy = [busyLoop(), busyLoop()]
    const queue = uniqueQueue('prio')
    const broker = db.broker()
    const started: number[] = []
    const job = broker.actor(
      'job',
      async (priority: number) => {
        started.push(priority)
      },
      { queue },
    )
    const count = 600
    await broker.enqueueMany(
      Array.from({ length: count }, (_, i) => {
        const priority = PRIORITIES[i % PRIORITIES.length]!
        return job.messageWithOptions({ args: [priority], priority })
      }),
    )
    // Concurrency 1 and a small fixed prefetch: many claims, often two in flight.
    const worker = broker.worker({ concurrency: 1, prefetch: 6 })
    await worker.start()
    await until(() => started.length === count, 60_000, 'every message to start')
    await worker.stop()
    const sorted = [...started].sort((a, b) => a - b)
    expect(started).toEqual(sorted)
  })
})
