import { describe, expect, it } from 'vitest'
import { setupDatabase, states, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

interface Start {
  readonly queue: string
  readonly priority: number
  readonly order: number
}

describe('claims over several queues', () => {
  it('starts messages of three queues in priority order, each queue in eta order within a priority', async () => {
    const queues = [uniqueQueue('a'), uniqueQueue('b'), uniqueQueue('c')]
    const broker = db.broker()
    const started: Start[] = []
    const actors = queues.map((queue) =>
      broker.actor(
        `job_${queue}`,
        async (priority: number, order: number) => {
          started.push({ queue, priority, order })
        },
        { queue },
      ),
    )
    // Interleaved: every queue holds every priority, with etas (all past) that
    // disagree with the send order, so neither send order nor queue order
    // gives the expected sequence by accident.
    const base = Date.now() - 60_000
    const entries = []
    let n = 0
    for (const priority of [3, -1, 7, 0, 3, 2_147_483_647, -2_147_483_647, 7]) {
      for (const [q, actor] of actors.entries()) {
        const order = (n * 7919) % 97 // a permutation of the send order
        entries.push({
          message: actor.messageWithOptions({ args: [priority, order], priority }),
          eta: new Date(base + order * 100 + q),
        })
        n++
      }
    }
    await broker.enqueueMany(entries)
    const worker = broker.worker({ concurrency: 1, prefetch: 4 })
    await worker.start()
    await until(() => started.length === entries.length, 30_000, 'every message to start')
    await worker.stop()
    const priorities = started.map((s) => s.priority)
    expect(priorities).toEqual([...priorities].sort((a, b) => a - b))
    for (const queue of queues) {
      for (const priority of new Set(priorities)) {
        const orders = started
          .filter((s) => s.queue === queue && s.priority === priority)
          .map((s) => s.order)
        expect(orders).toEqual([...orders].sort((a, b) => a - b))
      }
    }
  })

  it('two queues, one worker: every message of the higher priority runs first, across queues', async () => {
    const queues = [uniqueQueue('hi'), uniqueQueue('lo')]
    const broker = db.broker()
    const started: number[] = []
    const [first, second] = queues.map((queue) =>
      broker.actor(
        `job_${queue}`,
        async (priority: number) => {
          started.push(priority)
        },
        { queue },
      ),
    )
    await broker.enqueueMany([
      ...Array.from({ length: 150 }, () => first!.messageWithOptions({ args: [5], priority: 5 })),
      ...Array.from({ length: 150 }, () => second!.messageWithOptions({ args: [1], priority: 1 })),
      ...Array.from({ length: 150 }, () => first!.messageWithOptions({ args: [0], priority: 0 })),
    ])
    const worker = broker.worker({ concurrency: 4 })
    await worker.start()
    await until(() => started.length === 450, 30_000, 'every message to start')
    await worker.stop()
    // With 4 slots, messages start in priority order (at most the 4 running overlap).
    expect(started).toEqual([...started].sort((a, b) => a - b))
  })

  it('skips a paused queue among several: its messages are never claimed, the others all run', async () => {
    const queues = [uniqueQueue('run1'), uniqueQueue('paused'), uniqueQueue('run2')]
    const broker = db.broker()
    const done = new Map<string, number>()
    const actors = queues.map((queue) =>
      broker.actor(
        `job_${queue}`,
        async () => {
          done.set(queue, (done.get(queue) ?? 0) + 1)
        },
        { queue },
      ),
    )
    await broker.pause(queues[1]!)
    // The paused queue's messages come first in priority and in send order.
    await broker.enqueueMany(
      Array.from({ length: 300 }, () => actors[1]!.messageWithOptions({ args: [], priority: -1 })),
    )
    await broker.enqueueMany([
      ...Array.from({ length: 300 }, () => actors[0]!.message()),
      ...Array.from({ length: 300 }, () => actors[2]!.message()),
    ])
    const worker = broker.worker({ concurrency: 8 })
    await worker.start()
    await until(
      () => done.get(queues[0]!) === 300 && done.get(queues[2]!) === 300,
      30_000,
      'the unpaused queues to drain',
    )
    await worker.stop()
    expect(done.get(queues[1]!)).toBeUndefined()
    // The pause gate is in the claim: the paused queue's rows were never even claimed.
    const [paused] = await db.sql`select count(*)::int as n from iddqueue.messages
      where queue = ${queues[1]!} and state = 'queued' and attempts = 0 and worker_id is null`
    expect(paused?.n).toBe(300)
    expect(await states(db.sql, { queue: queues[1]! })).toEqual({ queued: 300 })
  })

  it('a delayed message of higher priority neither starts early nor holds back ready ones', async () => {
    const queue = uniqueQueue('delayed')
    const broker = db.broker()
    const started: { kind: string; urgentDue: boolean }[] = []
    const job = broker.actor(
      'job',
      async (kind: string) => {
        // Whether the urgent message is due now, by PostgreSQL's clock (the one that set its eta).
        const [row] = await db.sql`select eta <= now() as due from iddqueue.messages
          where queue = ${queue} and args ->> 0 = 'urgent'`
        started.push({ kind, urgentDue: row?.due === true })
      },
      { queue },
    )
    await job.sendWithOptions({ args: ['urgent'], priority: -100, delayMs: 3_000 })
    await broker.enqueueMany(
      Array.from({ length: 30 }, () => job.messageWithOptions({ args: ['ready'], priority: 10 })),
    )
    const worker = broker.worker({ concurrency: 1 })
    await worker.start()
    await until(() => started.length === 31, 30_000, 'every message to start')
    await worker.stop()
    // Ready messages ran while the urgent one was not due: it did not hold them back.
    expect(started[0]).toEqual({ kind: 'ready', urgentDue: false })
    // And it started only once due.
    const urgent = started.find((s) => s.kind === 'urgent')
    expect(urgent).toEqual({ kind: 'urgent', urgentDue: true })
  })
})
