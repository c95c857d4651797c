import { type Actor, type ActorContext, type Broker, InvalidOptionError } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { coordination, RateLimited } from '../src/index.js'
import { gate, rejection, runChild, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

async function ready() {
  const coord = coordination({ purgeIntervalMs: false })
  const broker = db.broker({ plugins: [coord] })
  await broker.ready()
  return { coord, broker }
}

/**
 * Sends a, b, c and d's first messages (a concurrency key each), then b's
 * second and e's first, and starts a worker of 4 slots and no prefetch:
 * its first claim takes a, b, c and d, full and stepping over nothing, so
 * its next claim has no pre-filter (decision 0019). Records each claim's
 * row count.
 */
async function startLeanClaims(
  broker: Broker,
  actor: Actor<(key: string, n: number) => Promise<void>>,
  queue: string,
) {
  await broker.enqueueMany([
    ...['a', 'b', 'c', 'd'].map((key) => actor.message(key, 1)),
    actor.message('b', 2),
    actor.message('e', 1),
  ])
  const worker = broker.worker({
    queues: [queue],
    concurrency: 4,
    prefetch: 0,
    pollIntervalMs: 60_000,
  })
  const claims: number[] = []
  broker.on('worker:claimed', (event) => {
    claims.push(event.count)
  })
  await worker.start()
  return { worker, claims }
}

async function queued(queue: string): Promise<number> {
  const [row] =
    await db.sql`select count(*)::int as n from iddqueue.messages where queue = ${queue}`
  return row?.n as number
}

describe('limits the claim enforces', () => {
  it('3 worker processes: a global limit of 4 and 200 keys of limit 1 hold; a SIGKILLed worker frees its slots', async () => {
    const { coord, broker } = await ready()
    const queue = uniqueQueue('limits')
    await db.sql`create table if not exists probe (name text primary key, running int not null, max int not null)`
    // The producer declares the same actors as the workers: the key is computed at send.
    const global = broker.actor('global', () => {}, { queue, concurrency: { limit: 4 } })
    const keyed = broker.actor('keyed', (_key: string) => {}, {
      queue,
      concurrency: { key: (key: string) => key, limit: 1 },
    })
    const keys = Array.from({ length: 200 }, (_, i) => `key-${i}`)
    // A worker that takes a few messages and never finishes them, killed while it holds their slots.
    const hanging: string[] = []
    const hang = runChild<{ hanging?: string; ready?: string }>(
      'limited-worker.mjs',
      [db.url, queue, 'hang'],
      (message) => {
        if (message.hanging) hanging.push(message.hanging)
      },
    )
    await broker.enqueueMany([
      ...keys.map((key) => keyed.message(key)),
      ...Array.from({ length: 4 }, () => global.message()),
    ])
    await until(() => hanging.length === 3, 60_000, 'the hanging worker to hold three slots')
    hang.kill('SIGKILL')
    await hang.done.catch(() => {})
    await broker.enqueueMany([
      ...keys.flatMap((key) => [keyed.message(key), keyed.message(key)]),
      ...Array.from({ length: 100 }, () => global.message()),
    ])
    const workers = [0, 1, 2].map(() => runChild('limited-worker.mjs', [db.url, queue, 'run']))
    const samples: { scope: string; name: string; n: number }[] = []
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        const rows = await db.sql<{ scope: string; name: string; n: number }[]>`
          select case substr(e->>'id', 2, 1) when 'k' then 'key' else 'actor' end as scope, substr(e->>'id', 4) as name, count(*)::int as n
            from iddqueue.messages, jsonb_array_elements(options->'limits') e
           where queue = ${queue} and state = 'consumed' group by 1, 2`
        samples.push(...rows)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    })()
    await broker.join({ queues: [queue], timeoutMs: 120_000 })
    sampling = false
    await sampler
    for (const worker of workers) worker.send('stop')
    await Promise.all(workers.map((worker) => worker.done))
    const [states] =
      await db.sql`select count(*)::int as n, count(*) filter (where state = 'done')::int as done
      from iddqueue.messages where queue = ${queue}`
    expect(states).toEqual({ n: 704, done: 704 })
    // Inside the handlers, across the processes: never more than the limits.
    const probes = await db.sql<{ name: string; max: number }[]>`select name, max from probe`
    expect(probes.find((p) => p.name === 'global')?.max).toBeLessThanOrEqual(4)
    expect(probes.filter((p) => p.name !== 'global').every((p) => p.max === 1)).toBe(true)
    expect(probes.filter((p) => p.name !== 'global')).toHaveLength(200)
    // Sampled from the rows: running counts within the limits; nothing left held.
    expect(samples.every((s) => s.n <= (s.scope === 'actor' ? 4 : 1))).toBe(true)
    const limits = await coord.listLimits()
    expect(limits.find((l) => l.scope === 'actor' && l.name === 'global')).toMatchObject({
      concurrency: 4,
      running: 0,
    })
    expect(limits.filter((l) => l.running > 0)).toEqual([])
  }, 240_000)

  it('a limit set at runtime is used by the next claim, and listLimits shows the holders', async () => {
    const { coord, broker } = await ready()
    const queue = uniqueQueue()
    let running = 0
    const held = gate()
    const actor = broker.actor(
      'slow',
      async (_key: string) => {
        running++
        await held.passed
      },
      { queue, concurrency: { key: (key: string) => `tenant:${key}`, limit: 1 } },
    )
    await coord.setLimit({ key: 'tenant:a' }, { concurrency: 3 })
    await broker.enqueueMany(Array.from({ length: 6 }, () => actor.message('a')))
    const worker = broker.worker({ queues: [queue], concurrency: 8, pollIntervalMs: 50 })
    await worker.start()
    await until(() => running === 3, 20_000, 'three runs of tenant:a')
    const limit = (await coord.listLimits()).find((l) => l.name === 'tenant:a')
    expect(limit).toMatchObject({ scope: 'key', concurrency: 3, running: 3 })
    held.open()
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await worker.stop()
    expect(running).toBe(6)
  })

  it('a saturated key with a backlog holds back none of the keys behind it (decision 0019)', async () => {
    const { broker } = await ready()
    const queue = uniqueQueue('hol')
    const done: string[] = []
    const held = gate()
    const actor = broker.actor(
      'tenant',
      async (key: string) => {
        if (key === 'hot') await held.passed
        done.push(key)
      },
      { queue, concurrency: { key: (key: string) => key, limit: 1 } },
    )
    await broker.enqueueMany([
      ...Array.from({ length: 30 }, () => actor.message('hot')),
      ...['a', 'b', 'c'].map((key) => actor.message(key)),
    ])
    // One claim at a time, one row each: a claim without the pre-filter would
    // only ever see the hot key's next row, refuse it, and find nothing else.
    const worker = broker.worker({
      queues: [queue],
      concurrency: 2,
      prefetch: 0,
      pollIntervalMs: 60_000,
    })
    await worker.start()
    await until(() => done.length === 3, 10_000, 'the keys behind the hot one')
    expect([...done].sort()).toEqual(['a', 'b', 'c'])
    held.open()
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await worker.stop()
    expect(done.filter((key) => key === 'hot')).toHaveLength(30)
  })

  for (const override of [undefined, 2]) {
    it(`a claim without the pre-filter counts a key's running messages${override ? ' against its stored limit' : ''} (decision 0019)`, async () => {
      const { coord, broker } = await ready()
      const queue = uniqueQueue('lean')
      const running = new Map<string, number>()
      const most = new Map<string, number>()
      const done: string[] = []
      const held = gate()
      const actor = broker.actor(
        'keyed',
        async (key: string, n: number) => {
          running.set(key, (running.get(key) ?? 0) + 1)
          most.set(key, Math.max(most.get(key) ?? 0, running.get(key)!))
          if (['b', 'c', 'd'].includes(key) && n === 1) await held.passed
          running.set(key, running.get(key)! - 1)
          done.push(`${key}${n}`)
        },
        { queue, concurrency: { key: (key: string) => key, limit: 1 } },
      )
      if (override) await coord.setLimit({ key: 'b' }, { concurrency: override })
      // a ends at once and frees one slot: the claim without the pre-filter
      // has b's second message as its only candidate.
      const { worker, claims } = await startLeanClaims(broker, actor, queue)
      if (override) {
        await until(
          () => done.includes('b2'),
          10_000,
          "b's second message, within its stored limit",
        )
        expect(most.get('b')).toBe(2)
        // Taken by the claim without the pre-filter, not left for the next one.
        expect(claims.slice(0, 2)).toEqual([4, 1])
      } else {
        await until(() => done.includes('e1'), 10_000, 'the message behind the running key')
        expect(done).not.toContain('b2')
      }
      held.open()
      await broker.join({ queues: [queue], timeoutMs: 20_000 })
      await worker.stop()
      expect(most.get('b')).toBe(override ?? 1)
      expect(done).toHaveLength(6)
    })
  }

  it('a claim without the pre-filter steps over a key held by RateLimited (decision 0019)', async () => {
    const { coord, broker } = await ready()
    const queue = uniqueQueue('leanhold')
    const done: string[] = []
    const first = gate()
    const held = gate()
    const actor = broker.actor(
      'keyed',
      async (key: string, n: number) => {
        if (key === 'a') await first.passed
        if (['b', 'c', 'd'].includes(key) && n === 1) await held.passed
        done.push(`${key}${n}`)
      },
      { queue, concurrency: { key: (key: string) => key, limit: 1 } },
    )
    // b may run two at once: only its hold can keep its second message back.
    await coord.setLimit({ key: 'b' }, { concurrency: 2 })
    const { worker, claims } = await startLeanClaims(broker, actor, queue)
    // After the first claim b is held, as a RateLimited throw with its key
    // would, and a ends: the claim without the pre-filter has b's second
    // message as its only candidate, and must refuse it.
    await until(() => claims.length === 1, 10_000, 'the first claim')
    await db.sql`update iddqueue.coordination_limits set held_until = now() + interval '1 hour'
      where scope = 'key' and name = 'b'`
    first.open()
    await until(() => done.includes('e1'), 10_000, 'the message behind the held key')
    expect(claims.slice(0, 3)).toEqual([4, 0, 1])
    expect(done).not.toContain('b2')
    await db.sql`update iddqueue.coordination_limits set held_until = null
      where scope = 'key' and name = 'b'`
    held.open()
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await worker.stop()
    expect(done).toHaveLength(6)
  })

  it('a claim waits for a concurrent claim of the same key, then counts the place it took (decision 0018)', async () => {
    const { broker } = await ready()
    const queue = uniqueQueue('race')
    const actor = broker.actor('raced', (_n: number) => {}, {
      queue,
      concurrency: { key: () => 'shared', limit: 1 },
    })
    const first = await actor.send(1)
    const second = await actor.send(2)
    // Another claimer holds the key's lock and has taken its one place, not yet committed.
    const other = await db.sql.reserve()
    await other`begin`
    await other`select iddqueue.coordination_running(array['ck:shared'])`
    await other`update iddqueue.messages set state = 'consumed', worker_id = ${crypto.randomUUID()}
      where id = ${first.id}`
    const claims: number[] = []
    broker.on('worker:claimed', (event) => {
      claims.push(event.count)
    })
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 60_000 })
    await worker.start()
    // The worker's claim saw the key free in its snapshot, and now waits on its lock...
    await until(
      async () =>
        (
          await db.sql`select count(*)::int as n from pg_locks
            where locktype = 'advisory' and not granted
              and database = (select oid from pg_database where datname = current_database())`
        )[0]?.n === 1,
      10_000,
      "the worker's claim to wait for the key",
    )
    expect(claims).toEqual([])
    await other`commit`
    other.release()
    // ... then counts the place the other claim took, and leaves the second message queued.
    await until(() => claims.length === 1, 10_000, 'the claim to return')
    expect(claims).toEqual([0])
    const [row] = await db.sql`select state from iddqueue.messages where id = ${second.id}`
    expect(row?.state).toBe('queued')
    await worker.stop()
  })

  it('a RateLimited throw frees the slot and does not count an attempt', async () => {
    const { broker } = await ready()
    const queue = uniqueQueue()
    const attempts: number[] = []
    const actor = broker.actor(
      'limited',
      (_key: string, ctx: ActorContext) => {
        attempts.push(ctx.attempt)
        if (attempts.length === 1) throw new RateLimited({ untilMs: 20, key: 'k' })
      },
      { queue, maxRetries: 0, concurrency: { key: (key: string) => key, limit: 1 } },
    )
    const message = await actor.send('k')
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 20 })
    await worker.start()
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await until(() => attempts.length === 2, 20_000, 'the second delivery')
    await worker.stop()
    const [row] =
      await db.sql`select state, retries from iddqueue.messages where id = ${message.id}`
    expect(row).toMatchObject({ state: 'done', retries: 0 })
    expect(attempts).toEqual([1, 1])
  })

  it('refuses bad limits at declaration and bad keys at send, storing nothing', async () => {
    const { broker } = await ready()
    const queue = uniqueQueue()
    for (const limit of [0, -1, Number.NaN, 1.5, '2']) {
      expect(() =>
        broker.actor(`bad_${String(limit).replace(/\W/g, '_')}`, () => {}, {
          queue,
          concurrency: { limit } as never,
        }),
      ).toThrow(InvalidOptionError)
    }
    expect(() =>
      broker.actor('bad_key_fn', () => {}, { queue, concurrency: { limit: 1, key: 'x' } as never }),
    ).toThrow(InvalidOptionError)
    const throwing = broker.actor('throwing', (_n: number) => {}, {
      queue,
      concurrency: {
        limit: 1,
        key: () => {
          throw new Error('no key')
        },
      },
    })
    const numeric = broker.actor('numeric', (n: number) => n, {
      queue,
      concurrency: { limit: 1, key: (n: number) => n as unknown as string },
    })
    const long = broker.actor('long', (_n: number) => {}, {
      queue,
      concurrency: { limit: 1, key: () => 'x'.repeat(10_000) },
    })
    const plain = broker.actor('plain', () => {}, { queue })
    for (const send of [
      () => throwing.send(1),
      () => numeric.send(1),
      () => long.send(1),
      () =>
        throwing.sendWithOptions({ args: [1], options: { concurrencyKey: 'x'.repeat(10_000) } }),
      () => plain.sendWithOptions({ args: [], options: { concurrencyKey: 'k' } }),
    ]) {
      const error = await rejection((async () => send())())
      expect(InvalidOptionError.isInstance(error), String(error)).toBe(true)
    }
    expect(await queued(queue)).toBe(0)
  })
})
