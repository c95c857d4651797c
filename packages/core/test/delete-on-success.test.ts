import { describe, expect, it } from 'vitest'
import {
  type ActorContext,
  type Broker,
  createBroker,
  InvalidOptionError,
  type Middleware,
  type SettledMessage,
} from '../src/index.js'
import { setupDatabase, states, uniqueQueue } from './helpers.js'

const db = setupDatabase()

async function drain(broker: Broker, queue: string) {
  const worker = broker.worker({ queues: [queue], pollIntervalMs: 50 })
  await worker.start()
  await broker.join({ queues: [queue] })
  await worker.stop()
}

describe('deleteOnSuccess', () => {
  it('deletes successes and keeps rejected messages and retries in flight', async () => {
    const broker = db.broker({ deleteOnSuccess: true })
    const queue = uniqueQueue('delete')
    const ok = broker.actor('ok', (_n: number) => {}, { queue })
    let flakyCalls = 0
    const flaky = broker.actor(
      'flaky',
      () => {
        flakyCalls++
        if (flakyCalls === 1) throw new Error('first attempt fails')
      },
      { queue, maxRetries: 2, minBackoffMs: 10, maxBackoffMs: 10 },
    )
    const bad = broker.actor(
      'bad',
      () => {
        throw new TypeError('always')
      },
      { queue, maxRetries: 0 },
    )
    await broker.enqueueMany(Array.from({ length: 200 }, (_, i) => ok.message(i)))
    const flakyMessage = await flaky.send()
    const badMessage = await bad.send()

    await drain(broker, queue)

    expect(flakyCalls).toBe(2)
    expect(await states(db.sql, { queue })).toEqual({ rejected: 1 })
    const rows = await db.sql`select id, failure->>'type' as type from iddqueue.messages
      where queue = ${queue}`
    expect(rows).toEqual([{ id: badMessage.id, type: 'TypeError' }])
    expect(await broker.cancellationStatus(flakyMessage.id)).toEqual({
      state: null,
      requested: false,
    })
  })

  it('reports deleted successes as done to settle hooks, sends pipeline steps and counts groups', async () => {
    const seen: SettledMessage['state'][] = []
    const recorder: Middleware = {
      async settle(event) {
        seen.push(...event.settled.map((s) => s.state))
      },
    }
    const broker = db.broker({ deleteOnSuccess: true, middleware: [recorder] })
    const queue = uniqueQueue('delete_hooks')
    const steps: number[] = []
    const step = broker.actor(
      'step',
      (n: number, previous?: number, _ctx?: ActorContext) => {
        steps.push(n)
        return n + (previous ?? 0)
      },
      { queue },
    )
    const bad = broker.actor(
      'bad',
      () => {
        throw new Error('no')
      },
      { queue, maxRetries: 0 },
    )
    await broker.pipeline([step.message(1), step.message(2), step.message(3)]).run()
    const group = await broker.group([step.message(10), step.message(20), bad.message()]).run()

    await drain(broker, queue)

    expect(steps.filter((n) => n < 10)).toEqual([1, 2, 3])
    expect(seen.filter((s) => s === 'done')).toHaveLength(5)
    expect(seen.filter((s) => s === 'rejected')).toHaveLength(1)
    expect(await states(db.sql, { queue })).toEqual({ rejected: 1 })
    expect(await group.completedCount()).toBe(2)
  })

  it('keeps done rows by default', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('keep')
    const ok = broker.actor('ok', () => {}, { queue })
    await ok.send()
    await drain(broker, queue)
    expect(await states(db.sql, { queue })).toEqual({ done: 1 })
  })

  it('refuses a value that is not a boolean', () => {
    for (const [name, value] of [
      ['deleteOnSuccess', 'yes'],
      ['currentMessage', 1],
    ] as const) {
      const create = () => createBroker({ url: db.url, [name]: value as never })
      expect(create).toThrow(InvalidOptionError)
      expect(create).toThrow(`Invalid ${name} ${JSON.stringify(value)}: expected true or false`)
    }
  })
})
