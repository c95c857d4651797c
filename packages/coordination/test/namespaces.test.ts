import type { Broker } from '@iddqueue/core'
import { collectNotifications } from '@iddqueue/testing'
import { describe, expect, it } from 'vitest'
import { type CoordinationPlugin, coordination, type Lease } from '../src/index.js'
import { setupDatabase } from './helpers.js'

const db = setupDatabase()

/** Two namespaces in one schema, told apart by their prefix only, each with the plugin. */
async function twoNamespaces() {
  const plugins = {
    a: coordination({ purgeIntervalMs: false }),
    b: coordination({ purgeIntervalMs: false }),
  }
  const a = db.broker({ namespace: { schema: 'shared', prefix: 'a_' }, plugins: [plugins.a] })
  const b = db.broker({ namespace: { schema: 'shared', prefix: 'b_' }, plugins: [plugins.b] })
  await a.migrate()
  await b.migrate()
  await Promise.all([a.ready(), b.ready()])
  const channels = {
    a: await collectNotifications(db.sql, a.namespace.channel('coordination')),
    b: await collectNotifications(db.sql, b.namespace.channel('coordination')),
  }
  const stop = () => Promise.all([channels.a.stop(), channels.b.stop()])
  return { a, b, plugins, channels, stop }
}

async function rows(table: string, columns = 'key') {
  const order = columns.split(',').map((_, i) => i + 1)
  return db.sql.unsafe(`select ${columns} from shared.${table} order by ${order.join(', ')}`)
}

describe('two namespaces in one schema (prefixes a_ and b_)', () => {
  it('keep their own limiter slots, tokens, hits and barriers, and wake only their own waiters', async () => {
    const { plugins, channels, stop } = await twoNamespaces()
    const limiters = (coord: CoordinationPlugin) => ({
      concurrent: coord.concurrentLimiter('api', { limit: 1, ttlMs: 60_000 }),
      bucket: coord.bucketLimiter('api', { limit: 1, bucketMs: 3_600_000 }),
      window: coord.windowLimiter('api', { limit: 1, windowMs: 3_600_000 }),
    })
    const inA = limiters(plugins.a)
    const inB = limiters(plugins.b)
    // The same key and a limit of 1 in both: each namespace grants one, and only one.
    const leases = new Map<string, Lease | undefined>()
    for (const kind of ['concurrent', 'bucket', 'window'] as const) {
      leases.set(`a ${kind}`, await inA[kind].tryAcquire())
      leases.set(`b ${kind}`, await inB[kind].tryAcquire())
      expect(await inA[kind].tryAcquire(), `a second ${kind} in a`).toBeUndefined()
      expect(await inB[kind].tryAcquire(), `a second ${kind} in b`).toBeUndefined()
    }
    expect([...leases].filter(([, lease]) => lease === undefined)).toEqual([])
    for (const prefix of ['a_', 'b_']) {
      expect(await rows(`${prefix}coordination_slots`)).toEqual([{ key: 'api' }])
      expect(await rows(`${prefix}coordination_buckets`, 'key, count')).toEqual([
        { key: 'api', count: 1 },
      ])
      expect(await rows(`${prefix}coordination_hits`)).toEqual([{ key: 'api' }])
    }

    // A waiter in b: a's release notifies a's channel only and frees a's
    // slot only; b's release gives b's waiter the slot.
    let acquired = false
    const waiting = inB.concurrent.acquire({ waitMs: 30_000 }).then((lease) => {
      acquired = true
      return lease
    })
    expect(await leases.get('a concurrent')!.release()).toBe(true)
    expect(await channels.a.settled()).toEqual(['one:concurrent:api'])
    expect(await channels.b.settled()).toEqual([])
    expect(await rows('a_coordination_slots')).toEqual([])
    expect(await rows('b_coordination_slots')).toEqual([{ key: 'api' }])
    expect(acquired).toBe(false)
    expect(await leases.get('b concurrent')!.release()).toBe(true)
    const lease = await waiting
    expect(await channels.b.settled()).toEqual(['one:concurrent:api'])
    expect(await channels.a.settled()).toEqual([])

    // Barriers with one key: a's opens when a's two parties arrive; b's has one.
    const barrierA = plugins.a.barrier('meet', { parties: 2, ttlMs: 60_000 })
    const barrierB = plugins.b.barrier('meet', { parties: 2, ttlMs: 60_000 })
    expect(await barrierA.create()).toBe(true)
    expect(await barrierB.create()).toBe(true)
    expect(await barrierB.arrive()).toBe(1)
    expect(await barrierA.arrive()).toBe(1)
    expect(await barrierA.arrive()).toBe(2)
    expect(await barrierA.wait({ timeoutMs: 0 })).toBe(true)
    expect(await barrierB.wait({ timeoutMs: 0 })).toBe(false)
    expect(await channels.a.settled()).toEqual(['all:barrier:meet'])
    expect(await channels.b.settled()).toEqual([])
    expect(await rows('a_coordination_barriers', 'key, arrived')).toEqual([
      { key: 'meet', arrived: 2 },
    ])
    expect(await rows('b_coordination_barriers', 'key, arrived')).toEqual([
      { key: 'meet', arrived: 1 },
    ])

    // Purge: b's expired slot (1 ms TTL) and its lock row go with b's purge; a's stay.
    for (const coord of [plugins.a, plugins.b]) {
      const short = coord.concurrentLimiter('short', { limit: 1, ttlMs: 1 })
      expect(await short.tryAcquire()).toBeDefined()
    }
    await db.sql`select pg_sleep(0.01)` // the 1 ms TTL passes by PostgreSQL's clock
    expect(await plugins.b.purge()).toBe(2)
    expect(await rows('b_coordination_slots')).toEqual([{ key: 'api' }])
    expect(await rows('b_coordination_locks', 'key, kind')).toEqual([
      { key: 'api', kind: 'concurrent' },
      { key: 'api', kind: 'window' },
    ])
    expect(await rows('a_coordination_slots')).toEqual([{ key: 'short' }])
    expect(await rows('a_coordination_locks', 'key, kind')).toEqual([
      { key: 'api', kind: 'concurrent' },
      { key: 'api', kind: 'window' },
      { key: 'short', kind: 'concurrent' },
    ])
    // a's: the expired slot, its lock row, and the lock row of a's released slot.
    expect(await plugins.a.purge()).toBe(3)
    await lease.release()
    await stop()
  })

  it('keep their own limits, running counts and groups: a drain of one leaves the other untouched', async () => {
    const { a, b, plugins, channels, stop } = await twoNamespaces()
    const calls: Record<'a' | 'b', string[]> = { a: [], b: [] }
    const declare = (broker: Broker, side: 'a' | 'b') => ({
      work: broker.actor('work', (i: number) => void calls[side].push(`work ${i}`), {
        queue: 'jobs',
        concurrency: { limit: 1 },
      }),
      done: broker.actor('done', (name: string) => void calls[side].push(`done ${name}`), {
        queue: 'jobs',
      }),
    })
    const inA = declare(a, 'a')
    const inB = declare(b, 'b')
    await plugins.b.setLimit({ key: 'tenant' }, { concurrency: 3 })
    expect((await plugins.a.listLimits()).map((limit) => limit.name)).toEqual(['work'])
    expect((await plugins.b.listLimits()).map((limit) => limit.name)).toEqual(['work', 'tenant'])

    const groupA = await plugins.a
      .group([inA.work.message(1), inA.work.message(2)])
      .run({ onCompletion: inA.done.message('group') })
    const groupB = await plugins.b
      .group([inB.work.message(1), inB.work.message(2)])
      .run({ onCompletion: inB.done.message('group') })
    expect(groupB.id).not.toBe(groupA.id)
    await drain(a, ['jobs'])
    expect(calls.a.sort()).toEqual(['done group', 'work 1', 'work 2'])
    expect(calls.b).toEqual([])
    expect(await groupA.completedCount()).toBe(2)
    expect(await groupB.completedCount()).toBe(0)
    expect(
      await rows('a_coordination_groups', 'id, done, completed_at is not null as completed'),
    ).toEqual([{ id: groupA.id, done: 2, completed: true }])
    expect(
      await rows('b_coordination_groups', 'id, done, completed_at is not null as completed'),
    ).toEqual([{ id: groupB.id, done: 0, completed: false }])
    expect(await rows('b_coordination_group_members', 'message_id')).toEqual([])
    // Each namespace counts its running messages with its own function, over its own table.
    const counting = await db.sql<{ name: string; body: string }[]>`
      select p.proname as name, p.prosrc as body from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'shared' and p.proname like '%coordination_running' order by 1`
    expect(counting.map((row) => row.name)).toEqual([
      'a_coordination_running',
      'b_coordination_running',
    ])
    expect(counting.map((row) => row.body.match(/"shared"\."(\w+)"/)?.[1])).toEqual([
      'a_messages',
      'b_messages',
    ])
    const queuedB =
      await db.sql`select count(*)::int as n from shared.b_messages where state = 'queued'`
    expect(queuedB[0]?.n).toBe(2)

    await drain(b, ['jobs'])
    expect(calls.b.sort()).toEqual(['done group', 'work 1', 'work 2'])
    expect(calls.a).toHaveLength(3)
    expect(await groupB.completedCount()).toBe(2)
    expect(await channels.a.settled()).toEqual([])
    expect(await channels.b.settled()).toEqual([])
    await stop()
  })
})

async function drain(broker: Broker, queues: string[]) {
  const worker = broker.worker({ queues, pollIntervalMs: 50 })
  await worker.start()
  await broker.join({ queues, timeoutMs: 20_000 })
  await worker.stop()
}
