import { createBroker } from '@iddqueue/core'
import { beforeEach, describe, expect, it } from 'vitest'
import { createScheduler, scheduler, startScheduler } from '../src/index.js'
import { recordingSql, scheduledMessages, setupDatabase, until } from './helpers.js'

// What the scheduler loop asks PostgreSQL, statement by statement, through a
// postgres.js client that records every statement it sends (the broker's
// `sql`). No timing is measured: the windows are bounded by the loop's own
// onTick events and by the statements themselves.

const db = setupDatabase()
const unique = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}`

beforeEach(async () => {
  await db.sql`delete from iddqueue.schedules`
})

/** The tick's `takeDue` (one due schedule, `FOR UPDATE SKIP LOCKED`). */
const isTakeDue = (text: string) => /for update skip locked/i.test(text)
/** The loop's read of the time until the earliest next run, before it sleeps. */
const isUntilNext = (text: string) => /min\(next_run_at\)/i.test(text)

/** A broker on a recording client; `close()` closes both. */
function recordingBroker() {
  const recording = recordingSql(db.url)
  const broker = createBroker({ sql: recording.sql, plugins: [scheduler()] })
  return {
    broker,
    statements: recording.statements,
    async close() {
      await broker.close()
      await recording.sql.end()
    },
  }
}

describe('the scheduler loop', () => {
  it('sends no statement while it sleeps between two occurrences', async () => {
    const { broker, statements, close } = recordingBroker()
    try {
      const name = unique('idle')
      await createScheduler(broker).create({ name, actor: 'a', everyMs: 2_000 })
      // The statement count at each tick that published: the first occurrence
      // is due at once, the second two seconds later.
      const marks: number[] = []
      const published: Date[] = []
      const running = startScheduler({
        broker,
        safetyPollMs: 3_600_000,
        onTick: (result) => {
          if (result.published.length === 0) return
          marks.push(statements.length)
          published.push(...result.published.map((o) => o.intendedAt))
        },
      })
      try {
        await until(() => marks.length >= 2, 20_000, 'two occurrences')
      } finally {
        await running.stop()
      }
      expect(published[1]!.getTime() - published[0]!.getTime()).toBe(2_000)
      const between = statements.slice(marks[0], marks[1])
      // After the first occurrence's tick: one read of the time to sleep, then
      // nothing until the tick that takes the second occurrence (its `begin`,
      // then `takeDue`), then that tick's last, empty `takeDue`.
      expect(between.filter(isUntilNext)).toHaveLength(1)
      expect(between.filter(isTakeDue)).toHaveLength(2)
      const asleep = between.slice(between.findIndex(isUntilNext) + 1, between.findIndex(isTakeDue))
      expect(asleep.filter((text) => !/^\s*begin\b/i.test(text))).toEqual([])
      expect((await scheduledMessages(db.sql, name)).map((m) => m.intendedAt)).toEqual(
        published.slice(0, 2).map((at) => at.toISOString()),
      )
    } finally {
      await close()
    }
  })

  it('ticks again at once, without sleeping, while a tick handles as many schedules as its limit', async () => {
    const { broker, statements, close } = recordingBroker()
    try {
      const schedules = createScheduler(broker)
      const names = [unique('full-a'), unique('full-b'), unique('full-c')]
      for (const name of names) await schedules.create({ name, actor: 'a', everyMs: 3_600_000 })
      const marks: number[] = []
      const handled: number[] = []
      const published: string[] = []
      const running = startScheduler({
        broker,
        limit: 1,
        safetyPollMs: 3_600_000,
        onTick: (result) => {
          handled.push(result.schedules)
          published.push(...result.published.map((o) => o.schedule))
          marks.push(statements.length)
        },
      })
      try {
        await until(() => handled.length >= 4, 20_000, 'four ticks')
      } finally {
        await running.stop()
      }
      // Three full ticks of one schedule each, then one that found none.
      expect(handled.slice(0, 4)).toEqual([1, 1, 1, 0])
      expect([...published].sort()).toEqual([...names].sort())
      // No read of the time to sleep (so no sleep) before the tick that found none.
      expect(statements.slice(0, marks[3]).filter(isUntilNext)).toEqual([])
      for (const name of names) expect(await scheduledMessages(db.sql, name)).toHaveLength(1)
    } finally {
      await close()
    }
  })
})
