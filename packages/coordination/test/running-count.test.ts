import { coreMigrations, generateInitSql } from '@iddqueue/schema'
import postgres from 'postgres'
import { describe, expect, it } from 'vitest'
import { coordination, migrationSet } from '../src/index.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

describe('the running count (decisions 0018 and 0020)', () => {
  it('finds each consumed message’s own limit wherever it is in its list, and its queue’s', async () => {
    const queue = uniqueQueue('count')
    const coord = coordination({ purgeIntervalMs: false, limits: [{ queue, concurrency: 50 }] })
    const broker = db.broker({ plugins: [coord] })
    await broker.migrate()
    const keyed = broker.actor('keyed', (_key: string) => {}, {
      queue,
      concurrency: { key: (key: string) => key, limit: 5 },
    })
    // A keyed rate comes first in its list: its own concurrency limit is second.
    const paced = broker.actor('paced', (_key: string) => {}, {
      queue,
      concurrency: { limit: 5 },
      rate: { key: (key: string) => key, limit: 10, periodMs: 1_000 },
    })
    const plain = broker.actor('plain', () => {}, { queue })
    await broker.enqueueMany([
      keyed.message('a'),
      keyed.message('a'),
      keyed.message('b'),
      paced.message('a'),
      plain.message(),
    ])
    const lists = await db.sql`select actor, options->'limits' as limits from iddqueue.messages
      where queue = ${queue} order by actor limit 3 offset 2`
    expect(lists[1]).toEqual({
      actor: 'paced',
      limits: [
        { id: 'rk:a', limit: 10, periodMs: 1_000 },
        { id: 'ca:paced', limit: 5 },
        { id: `cq:${queue}`, limit: 50 },
      ],
    })
    await db.sql`update iddqueue.messages set state = 'consumed', worker_id = gen_random_uuid(),
      started_at = now() where queue = ${queue}`
    const ids = ['ck:a', 'ck:b', 'ca:paced', 'ca:keyed', 'rk:a', `cq:${queue}`]
    const [counts] = await db.sql`select iddqueue.coordination_running(${ids}::text[]) as running`
    expect(Object.fromEntries(ids.map((id, i) => [id, counts?.running[i]]))).toEqual({
      'ck:a': 2,
      'ck:b': 1,
      'ca:paced': 1,
      'ca:keyed': 0,
      'rk:a': 0,
      [`cq:${queue}`]: 5,
    })
    // Each id is counted once: a repeated one is refused, never answered with a shorter array.
    await expect(
      db.sql`select iddqueue.coordination_running(${['ck:a', 'ck:b', 'ck:a']}::text[])`,
    ).rejects.toMatchObject({ code: '22023', message: expect.stringContaining('distinct') })
    const [none] = await db.sql`select iddqueue.coordination_running(${[]}::text[]) as running`
    expect(none?.running).toEqual([])
    // listLimits reads the same count.
    const running = Object.fromEntries(
      (await coord.listLimits())
        .filter((limit) => limit.running > 0)
        .map((limit) => [`${limit.scope}:${limit.name}`, limit.running]),
    )
    expect(running).toEqual({ 'key:a': 2, 'key:b': 1, 'actor:paced': 1, [`queue:${queue}`]: 5 })
  })

  it('is counted without a nested loop when the statistics say nothing runs (decision 0020)', async () => {
    const queue = uniqueQueue('stale')
    const broker = db.broker({ plugins: [coordination({ purgeIntervalMs: false })] })
    await broker.migrate()
    const keyed = broker.actor('stale', (_n: number) => {}, {
      queue,
      concurrency: { key: (n: number) => `k${n % 300}`, limit: 5 },
    })
    await broker.enqueueMany(Array.from({ length: 600 }, (_, n) => keyed.message(n)))
    // Analyzed while nothing ran, as before a drain: the planner expects no `consumed` row.
    await db.sql`update iddqueue.messages set state = 'done' where state = 'consumed'`
    await db.sql`analyze iddqueue.messages`
    await db.sql`update iddqueue.messages set state = 'consumed', worker_id = gen_random_uuid(),
      started_at = now() where queue = ${queue}`
    const plans: string[] = []
    const ids = Array.from({ length: 300 }, (_, n) => `ck:k${n}`)
    // auto_explain at level notice: the function's plans come back as notices.
    const sql = postgres(db.url, {
      max: 1,
      onnotice: (notice) => plans.push(String(notice.message)),
    })
    const [counts] = await sql
      .begin(async (tx) => {
        await tx`load 'auto_explain'`
        await tx`set local auto_explain.log_min_duration = 0`
        await tx`set local auto_explain.log_nested_statements = on`
        await tx`set local auto_explain.log_level = notice`
        return tx`select iddqueue.coordination_running(${ids}::text[]) as running`
      })
      .finally(() => sql.end())
    expect(counts?.running).toEqual(ids.map(() => 2))
    const count = plans.filter((plan) => plan.includes('messages'))
    expect(count).toHaveLength(1)
    expect(count[0]).not.toMatch(/Nested Loop/)
  })
})

describe('released migrations', () => {
  it('never change: their checksums are the ones released', () => {
    const init = generateInitSql({ owners: [coreMigrations, migrationSet] })
    const released = [
      ...init.matchAll(/values \('@iddqueue\/coordination', (\d+), '([^']+)', '([0-9a-f]+)'\)/g),
    ].map(([, version, name, checksum]) => `${version} ${name} ${checksum}`)
    expect(released.slice(0, 8)).toEqual([
      '1 create-limiters-barriers-groups de0f3ac7f57a3d37e2f693bde99ea0a2',
      '2 create-limits 5bde1d4b30c085f877f65fae27fdb163',
      '3 create-running-slots da76ad887f7a1eb21cfde14cfebe299f',
      '4 create-rate-windows 72b6fe80de1d5097a32956aacf9f4cf1',
      '5 counter-fillfactor c61bb70cc3baca255ac2d9330e9f0c75',
      '6 running-from-messages e8076df343c077a7b1d294eb1ab4a111',
      '7 lean-limited-claims a8ed45cac781cccf8746050f2b19c0cb',
      '8 running-array acc2219b57f40f13cb8a3c7dfd6e9c2a',
    ])
  })
})
