import { type ActorContext, createBroker } from '@iddqueue/core'
import { beforeEach, describe, expect, it } from 'vitest'
import {
  createScheduler,
  scheduledOccurrence,
  scheduler,
  startScheduler,
  type TickResult,
} from '../src/index.js'
import { scheduledMessages, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()
const unique = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}`

beforeEach(async () => {
  await db.sql`delete from iddqueue.schedules`
})

describe('startScheduler', () => {
  it('sleeps with nothing due and wakes on the change notification of a new schedule', async () => {
    const broker = db.broker()
    const ticks: TickResult[] = []
    // A safety poll far beyond the test's timeout: only the notification can wake it.
    const running = startScheduler({
      broker,
      safetyPollMs: 3_600_000,
      onTick: (r) => ticks.push(r),
    })
    try {
      await until(() => ticks.length >= 1, 20_000, 'the first tick')
      const before = ticks.length
      const name = unique('woken')
      await createScheduler(broker).create({ name, actor: 'a', everyMs: 3_600_000 })
      await until(
        () => ticks.some((t) => t.published.some((o) => o.schedule === name)),
        20_000,
        'the woken tick',
      )
      expect(ticks.length).toBeGreaterThan(before)
      expect(await scheduledMessages(db.sql, name)).toHaveLength(1)
    } finally {
      await running.stop()
    }
  })

  it('sleeps until the earliest next run and publishes it', async () => {
    const broker = db.broker()
    const name = unique('soon')
    const startAt = Date.now() + 1_500
    await createScheduler(broker).create({ name, actor: 'a', everyMs: 3_600_000, startAt })
    const published: TickResult['published'][number][] = []
    const running = startScheduler({
      broker,
      safetyPollMs: 3_600_000,
      onTick: (r) => published.push(...r.published),
    })
    try {
      await until(() => published.length > 0, 20_000, 'the occurrence')
      expect(published[0]!.intendedAt.getTime()).toBe(startAt)
    } finally {
      await running.stop()
    }
  })
})

describe('scheduler({ runInWorkers: true })', () => {
  it('publishes due occurrences while a worker runs, without a separate process', async () => {
    const queue = uniqueQueue('inworker')
    const broker = createBroker({ url: db.url, plugins: [scheduler({ runInWorkers: true })] })
    try {
      const seen: string[] = []
      broker.actor(
        'beat',
        (_: unknown, ctx: ActorContext) => {
          seen.push(scheduledOccurrence(ctx.message)!.name)
        },
        { queue },
      )
      const name = unique('inworker')
      await createScheduler(broker).define([
        { name, actor: 'beat', everyMs: 3_600_000, args: [null] },
      ])
      const info = await createScheduler(broker).get(name)
      expect(info!.queue).toBe(queue) // the declared actor's queue
      const worker = broker.worker({ queues: [queue], pollIntervalMs: 50 })
      await worker.start()
      await until(() => seen.length > 0, 20_000, 'the handler to run the occurrence')
      await worker.stop()
      expect(seen).toEqual([name])
    } finally {
      await broker.close()
    }
  })
})
