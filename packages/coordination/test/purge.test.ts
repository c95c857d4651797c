import { InvalidOptionError } from '@iddqueue/core'
import { expect, it } from 'vitest'
import { coordination } from '../src/index.js'
import { rejection, setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

it('purge() deletes expired slots, buckets, hits, barriers, groups and idle lock rows, and keeps live ones', async () => {
  const coord = coordination({ purgeIntervalMs: false })
  const broker = db.broker({ plugins: [coord] })
  await broker.ready()
  const key = uniqueQueue('p')
  const live = await coord.concurrentLimiter(`${key}-live`, { limit: 1, ttlMs: 600_000 }).acquire()
  await coord.concurrentLimiter(key, { limit: 1, ttlMs: 600_000 }).acquire()
  await coord.bucketLimiter(key, { limit: 1, bucketMs: 600_000 }).acquire()
  await coord.windowLimiter(key, { limit: 1, windowMs: 600_000 }).acquire()
  await coord.barrier(key, { parties: 2, ttlMs: 600_000 }).create()
  const member = broker.actor('member', () => {}, { queue: uniqueQueue() })
  const group = await coord.group([member.message()]).run({ ttlMs: 600_000 })
  for (const table of ['slots', 'buckets', 'hits', 'barriers']) {
    await db.sql`update ${db.sql(`iddqueue.coordination_${table}`)} set expires_at = now() - interval '1 second' where key = ${key}`
  }
  await db.sql`update iddqueue.coordination_groups set expires_at = now() - interval '1 second' where id = ${group.id}`
  // Claim rate windows: one with no start left in its period, one still counting.
  await db.sql`insert into iddqueue.coordination_rates (scope, name, starts, cap, period_ms, updated_at)
    values ('key', ${`${key}-idle`}, array[now() - interval '2 seconds'], 1, 1000, now() - interval '2 seconds'),
           ('key', ${`${key}-busy`}, array[now()], 1, 600000, now())`
  // 5 expired rows, the lock rows of the concurrent and window keys that no longer hold any, the idle window.
  expect(await coord.purge({ batchSize: 1 })).toBe(8)
  expect(await coord.purge()).toBe(0)
  const [row] =
    await db.sql`select count(*)::int as n from iddqueue.coordination_slots where key = ${`${key}-live`}`
  expect(row?.n).toBe(1)
  const windows =
    await db.sql`select name from iddqueue.coordination_rates where name like ${`${key}-%`}`
  expect(windows.map((w) => w.name)).toEqual([`${key}-busy`])
  expect(await live.release()).toBe(true)
  expect(InvalidOptionError.isInstance(await rejection(coord.purge({ batchSize: 0 })))).toBe(true)
})
