import { describe, expect, it } from 'vitest'
import type { ActorContext } from '../src/index.js'
import { setupDatabase, states, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()
const DAY = 24 * 3600 * 1000

async function age(queue: string, state: string, days: number) {
  await db.sql`update iddqueue.messages set updated_at = now() - ${days} * interval '1 day' where queue = ${queue} and state = ${state}`
}

describe('maintenance', () => {
  it('purge deletes finished messages older than the retention, in bounded batches, and expired keys', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const job = broker.actor('job', (_i?: number, _ctx?: ActorContext) => {}, { queue })
    const sent = await broker.enqueueMany(Array.from({ length: 12 }, (_, i) => job.message(i)))
    await db.sql`update iddqueue.messages set state = 'done' where id = any(${sent.slice(0, 5).map((m) => m.id)}::uuid[])`
    await db.sql`update iddqueue.messages set state = 'rejected' where id = any(${sent.slice(5, 8).map((m) => m.id)}::uuid[])`
    await db.sql`update iddqueue.messages set state = 'cancelled' where id = ${sent[8]!.id}`
    await age(queue, 'done', 40)
    await age(queue, 'rejected', 40)
    await age(queue, 'queued', 40) // queued rows are never purged, however old
    await job.sendWithOptions({ args: [99], dedupKey: 'short', dedupTtlMs: 1 })
    await job.sendWithOptions({ args: [98], dedupKey: 'long', dedupTtlMs: DAY })
    // 'short' expired a second ago, by PostgreSQL's clock.
    await db.sql`update iddqueue.deduplication set expires_at = now() - interval '1 second'
      where key = 'short'`
    const progress: number[] = []
    const result = await broker.purge({
      batchSize: 2,
      onProgress: (p) => progress.push(p.messages),
    })
    expect(result).toEqual({ messages: 8, deduplicationKeys: 1 })
    expect(progress.slice(0, 4)).toEqual([2, 4, 6, 8])
    expect(await states(db.sql, { queue })).toEqual({ queued: 5, cancelled: 1 })
    const keys = await db.sql`select key from iddqueue.deduplication order by key`
    expect(keys.map((k) => k.key)).toEqual(['long'])
    await age(queue, 'cancelled', 2)
    expect(await broker.purge({ olderThanMs: DAY })).toEqual({ messages: 1, deduplicationKeys: 0 })
    await expect(broker.purge({ olderThanMs: -1 })).rejects.toThrow('Invalid olderThanMs -1')
  })

  it('a worker purges on its own, one worker of the namespace at a time', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const job = broker.actor('job', (_i?: number, _ctx?: ActorContext) => {}, { queue })
    await broker.enqueueMany(Array.from({ length: 3 }, (_, i) => job.message(i)))
    const worker = broker.worker({
      purgeIntervalMs: 50,
      retentionMs: 60_000,
      heartbeatIntervalMs: 50,
      staleAfterMs: 5_000,
    })
    await worker.start()
    await broker.join({ queues: [queue] })
    await age(queue, 'done', 1)
    await until(
      async () => Object.keys(await states(db.sql, { queue })).length === 0,
      5_000,
      'the automatic purge',
    )
    await worker.stop()
  })

  it('recover requeues messages of dead and unknown workers, keeping their retry budget', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const job = broker.actor('job', (_i?: number, _ctx?: ActorContext) => {}, { queue })
    const [a, b, c] = await broker.enqueueMany([job.message(1), job.message(2), job.message(3)])
    const dead = crypto.randomUUID()
    const alive = crypto.randomUUID()
    await db.sql`insert into iddqueue.workers (id, host, pid, queues, concurrency, heartbeat_at)
      values (${dead}, 'gone', 1, ${[queue]}, 1, now() - interval '1 minute'),
             (${alive}, 'here', 2, ${[queue]}, 1, now())`
    await db.sql`update iddqueue.messages set state = 'consumed', retries = 2, worker_id = ${dead} where id = ${a!.id}`
    await db.sql`update iddqueue.messages set state = 'consumed', worker_id = ${crypto.randomUUID()} where id = ${b!.id}`
    await db.sql`update iddqueue.messages set state = 'consumed', worker_id = ${alive} where id = ${c!.id}`
    const wake = await db.sql.listen(broker.namespace.channel('wake'), () => {})
    expect(await broker.recover()).toBe(2)
    await wake.unlisten()
    const rows =
      await db.sql`select id, state, retries, worker_id from iddqueue.messages where queue = ${queue} order by id`
    expect(rows.map((r) => [r.state, r.retries, r.worker_id])).toEqual([
      ['queued', 2, null],
      ['queued', 0, null],
      ['consumed', 0, alive],
    ])
    const workers = await db.sql`select id from iddqueue.workers where id in (${dead}, ${alive})`
    expect(workers.map((w) => w.id)).toEqual([alive])
    await db.sql`delete from iddqueue.workers where id = ${alive}`
  })

  it("a worker's rescuer reports what it recovered once committed (messages:recovered)", async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const job = broker.actor('job', (_i: number) => {}, { queue })
    const [a, b] = await broker.enqueueMany([job.message(1), job.message(2)])
    const dead = crypto.randomUUID()
    await db.sql`insert into iddqueue.workers (id, host, pid, queues, concurrency, heartbeat_at)
      values (${dead}, 'gone', 1, ${[queue]}, 1, now() - interval '1 minute')`
    await db.sql`update iddqueue.messages set state = 'consumed', worker_id = ${dead} where id in (${a!.id}, ${b!.id})`
    await db.sql`update iddqueue.messages set cancel_requested = true where id = ${b!.id}`
    const recovered = new Promise<readonly { id: string; queue: string; state: string }[]>(
      (resolve) => broker.on('messages:recovered', ({ messages }) => resolve(messages)),
    )
    const worker = broker.worker({
      queues: [uniqueQueue('other')],
      heartbeatIntervalMs: 50,
      staleAfterMs: 5_000,
    })
    await worker.start()
    const messages = await recovered
    const [row] = await db.sql`select state from iddqueue.messages where id = ${a!.id}`
    await worker.stop()
    expect(row?.state).toBe('queued')
    expect([...messages].sort((x, y) => x.id.localeCompare(y.id))).toEqual(
      [
        { id: a!.id, queue, state: 'queued' },
        { id: b!.id, queue, state: 'cancelled' },
      ].sort((x, y) => x.id.localeCompare(y.id)),
    )
  })

  it('flush deletes queued messages of one queue or all, never running ones', async () => {
    const broker = db.broker()
    const q1 = uniqueQueue()
    const q2 = uniqueQueue()
    const one = broker.actor('one', () => {}, { queue: q1 })
    const two = broker.actor('two', () => {}, { queue: q2 })
    await broker.enqueueMany([one.message(), one.message(), two.message()])
    await db.sql`update iddqueue.messages set state = 'consumed' where id = (select id from iddqueue.messages where queue = ${q1} limit 1)`
    expect(await broker.flush({ queue: q1 })).toBe(1)
    expect(await states(db.sql, { queue: q1 })).toEqual({ consumed: 1 })
    expect(await states(db.sql, { queue: q2 })).toEqual({ queued: 1 })
    await expect(broker.flush({ queue: 'no good' })).rejects.toThrow('Invalid queue name "no good"')
  })

  it('join gives up with JoinTimeoutError naming what is left', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const job = broker.actor('job', (_i?: number, _ctx?: ActorContext) => {}, { queue })
    await job.send()
    await expect(broker.join({ queues: [queue], timeoutMs: 100 })).rejects.toThrow(
      `Queues ${queue} still hold 1 queued or consumed messages after 100 ms`,
    )
  })
})
