import { collectNotifications } from '@iddqueue/testing'
import { describe, expect, it } from 'vitest'
import { createScheduler, occurrenceKey, scheduler } from '../src/index.js'
import { setupDatabase } from './helpers.js'

const db = setupDatabase()

async function rows(query: string) {
  return db.sql.unsafe(query)
}

describe('two namespaces in one schema (prefixes a_ and b_)', () => {
  it('keep their own schedules, occurrences, dedup keys and change notifications', async () => {
    const a = db.broker({ namespace: { schema: 'shared', prefix: 'a_' }, plugins: [scheduler()] })
    const b = db.broker({ namespace: { schema: 'shared', prefix: 'b_' }, plugins: [scheduler()] })
    await a.migrate()
    await b.migrate()
    const channels = {
      a: await collectNotifications(db.sql, a.namespace.channel('schedule')),
      b: await collectNotifications(db.sql, b.namespace.channel('schedule')),
    }
    const schedules = { a: createScheduler(a), b: createScheduler(b) }
    // One name, one actor, one queue in both.
    const definition = { name: 'nightly', actor: 'report', queue: 'reports', everyMs: 3_600_000 }
    await schedules.a.create({ ...definition, args: ['from a'] })
    expect(await channels.a.settled()).toEqual(['changed'])
    expect(await channels.b.settled()).toEqual([])
    await schedules.b.create({ ...definition, args: ['from b'] })
    expect(await channels.b.settled()).toEqual(['changed'])
    expect(await channels.a.settled()).toEqual([])
    expect((await schedules.a.list()).map((s) => s.name)).toEqual(['nightly'])

    // The same timing in both: the same intended time (and dedup key), and
    // ids that differ only because the namespace is part of them.
    for (const prefix of ['a_', 'b_']) {
      await rows(`update shared.${prefix}schedules
        set anchor_at = '2026-01-01T00:00:00Z', next_run_at = '2026-01-01T00:00:00Z'`)
    }
    const tickA = await schedules.a.tick()
    expect(tickA.published).toHaveLength(1)
    expect(await rows('select count(*)::int as n from shared.b_messages')).toEqual([{ n: 0 }])
    const tickB = await schedules.b.tick()
    expect(tickB.published).toHaveLength(1)
    const [fromA, fromB] = [tickA.published[0]!, tickB.published[0]!]
    expect(fromB.intendedAt).toEqual(fromA.intendedAt)
    expect(fromB.messageId).not.toBe(fromA.messageId)
    for (const [prefix, id, args] of [
      ['a_', fromA.messageId, ['from a']],
      ['b_', fromB.messageId, ['from b']],
    ] as const) {
      expect(await rows(`select id::text as id, args from shared.${prefix}messages`)).toEqual([
        { id, args },
      ])
      expect(await rows(`select key from shared.${prefix}deduplication`)).toEqual([
        { key: occurrenceKey('nightly', fromA.intendedAt.getTime()) },
      ])
    }

    // Disabling and deleting in a leaves b's schedule as it was.
    await schedules.a.disable('nightly')
    expect((await schedules.b.get('nightly'))?.enabled).toBe(true)
    expect(await schedules.a.delete('nightly')).toBe(true)
    expect(await schedules.a.list()).toEqual([])
    expect((await schedules.b.list()).map((s) => s.name)).toEqual(['nightly'])
    expect(await channels.a.settled()).toEqual(['changed', 'changed'])
    expect(await channels.b.settled()).toEqual([])
    await Promise.all([channels.a.stop(), channels.b.stop()])
  })
})
