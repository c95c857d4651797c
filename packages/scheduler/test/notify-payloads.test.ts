import { collectNamespaceNotifications } from '@iddqueue/testing'
import { describe, expect, it } from 'vitest'
import { createScheduler } from '../src/index.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

const SECRET = `secret-${crypto.randomUUID()}`

describe('NOTIFY payloads of the scheduler', () => {
  it("are 'changed' for every change of a schedule, and the queue name for a publication; never arguments", async () => {
    const broker = db.broker({ namespace: { schema: 'payloads' } })
    await broker.migrate()
    const channels = await collectNamespaceNotifications(db.sql, broker.namespace)
    const schedules = createScheduler(broker)
    const queue = uniqueQueue('payloads')
    const name = `nightly-${crypto.randomUUID().slice(0, 8)}`
    const changes: [string, () => Promise<unknown>][] = [
      [
        'create',
        () => schedules.create({ name, actor: 'report', queue, everyMs: 60_000, args: [SECRET] }),
      ],
      ['update', () => schedules.update(name, { args: [SECRET, SECRET] })],
      ['disable', () => schedules.disable(name)],
      ['enable', () => schedules.enable(name)],
      [
        'define',
        () =>
          schedules.define([
            { name: `${name}-code`, actor: 'report', queue, everyMs: 60_000, args: [SECRET] },
          ]),
      ],
    ]
    for (const [what, change] of changes) {
      await change()
      const received = await channels.settled()
      expect(received.schedule, what).toEqual(['changed'])
      expect(received.wake, what).toEqual([])
    }
    // A tick publishes what is due: its wake-ups name the queue.
    const tick = await schedules.tick()
    expect(tick.published.length).toBeGreaterThan(0)
    const published = await channels.settled()
    expect(new Set(published.wake)).toEqual(new Set([queue]))
    expect(published.schedule.every((payload) => payload === 'changed')).toBe(true)
    expect(await schedules.delete(name)).toBe(true)
    const deleted = await channels.settled()
    expect(deleted.schedule).toEqual(['changed'])
    await channels.stop()
    for (const payloads of [published, deleted]) {
      for (const [purpose, list] of Object.entries(payloads)) {
        for (const payload of list) expect(payload, `on ${purpose}`).not.toContain(SECRET)
      }
      expect(payloads.control).toEqual([])
      expect(payloads.result).toEqual([])
      expect(payloads.coordination).toEqual([])
    }
  })
})
