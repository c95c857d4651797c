import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { setupDatabase, states, uniqueQueue } from './helpers.js'

const db = setupDatabase()

describe('iddqueue purge', () => {
  it('keeps recent finished messages by default, then purges them in batches with progress', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('purge')
    const job = broker.actor('purged', (_n: number) => {}, { queue })
    await broker.enqueueMany(Array.from({ length: 5 }, (_, n) => job.message(n)))
    const worker = broker.worker({ queues: [queue] })
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()
    const waiting = await job.sendWithOptions({ args: [9], delayMs: 60_000 })

    const kept = await db.cli('purge')
    expect(kept).toMatchObject({ code: 0, stderr: '' })
    expect(kept.stdout).toBe('purged 0 messages and 0 deduplication keys\n')
    expect(await states(db.sql, queue)).toEqual({ done: 5, queued: 1 })

    const run = await db.cli('purge', '--older-than-ms', '0', '--batch-size', '2')
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('purged 5 messages and 0 deduplication keys\n')
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      'purging: 2 messages and 0 deduplication keys deleted so far',
      'purging: 4 messages and 0 deduplication keys deleted so far',
      'purging: 5 messages and 0 deduplication keys deleted so far',
    ])
    expect(await states(db.sql, queue)).toEqual({ queued: 1 })
    const [row] = await db.sql`select state from iddqueue.messages where id = ${waiting.id}`
    expect(row?.state).toBe('queued')

    const json = await db.cli('purge', '--older-than-ms', '0', '--json')
    expect(json.json()).toEqual({ messages: 0, deduplicationKeys: 0 })
  })

  it('with --plugins @iddqueue/coordination, also purges the expired coordination rows', async () => {
    // The built plugin, given as a path (as --plugins accepts); the CLI's own dependencies do not include it.
    const plugin = fileURLToPath(new URL('../../coordination/dist/index.js', import.meta.url))
    expect((await db.cli('migrate', '--plugins', plugin)).code).toBe(0)
    await db.sql`insert into iddqueue.coordination_buckets (key, bucket, count, expires_at)
      values ('expired', 1, 1, now() - interval '1 minute'), ('live', 1, 1, now() + interval '1 hour')`
    const run = await db.cli('purge', '--plugins', plugin)
    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(run.stdout).toBe(
      'purged 0 messages and 0 deduplication keys\npurged 1 coordination row\n',
    )
    const left = await db.sql`select key from iddqueue.coordination_buckets`
    expect(left.map((row) => row.key)).toEqual(['live'])
    const json = await db.cli('purge', '--plugins', plugin, '--json')
    expect(json.json()).toEqual({ messages: 0, deduplicationKeys: 0, coordination: 0 })
  })

  it('refuses a malformed retention with exit 2', async () => {
    const run = await db.cli('purge', '--older-than-ms', '7d')
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toContain(
      'iddqueue purge: invalid --older-than-ms "7d": expected a whole number',
    )
  })
})

describe('iddqueue recover', () => {
  it('refuses a staleness past 100 years with exit 2', async () => {
    // now() minus 2^53 ms is no timestamp: PostgreSQL failed the statement (exit 1).
    const run = await db.cli('recover', '--stale-after-ms', '9007199254740991')
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toContain(
      'iddqueue recover: Invalid staleAfterMs 9007199254740991: expected an integer from 0 to 3155760000000',
    )
  })

  it('requeues the messages of a dead worker, keeping their retry budget', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('recover')
    const job = broker.actor('held', () => {}, { queue })
    const [held, free] = await broker.enqueueMany([job.message(), job.message()])
    // A worker that died holding a message: registered, heartbeat a minute old.
    const dead = crypto.randomUUID()
    await db.sql`insert into iddqueue.workers (id, host, pid, queues, concurrency, heartbeat_at)
      values (${dead}, 'gone', 1, ${[queue]}, 1, now() - interval '1 minute')`
    await db.sql`update iddqueue.messages set state = 'consumed', retries = 2, worker_id = ${dead}
      where id = ${held!.id}`

    const run = await db.cli('recover')
    expect(run).toMatchObject({ code: 0, stderr: '', stdout: 'recovered 1 message\n' })
    const rows = await db.sql`select id, state, retries, worker_id from iddqueue.messages
      where queue = ${queue} order by id`
    expect(rows.map((r) => [r.id, r.state, r.retries, r.worker_id])).toEqual([
      [held!.id, 'queued', 2, null],
      [free!.id, 'queued', 0, null],
    ])

    const again = await db.cli('recover', '--stale-after-ms', '60000', '--json')
    expect(again.json()).toEqual({ recovered: 0 })
  })
})

describe('iddqueue flush', () => {
  it('deletes the queued messages of one queue, delayed ones included, or of all', async () => {
    const broker = db.broker()
    const one = uniqueQueue('flush')
    const two = uniqueQueue('keep')
    const a = broker.actor('a', () => {}, { queue: one })
    const b = broker.actor('b', () => {}, { queue: two })
    await broker.enqueueMany([a.message(), { message: a.message(), delayMs: 60_000 }, b.message()])

    const run = await db.cli('flush', '--queue', one)
    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(run.stdout).toBe(`flushed 2 queued messages from ${one}\n`)
    expect(await states(db.sql, one)).toEqual({})
    expect(await states(db.sql, two)).toEqual({ queued: 1 })

    // Every queue: this test's and those earlier tests of this file left queued.
    const [before] =
      await db.sql`select count(*)::int as n from iddqueue.messages where state = 'queued'`
    const all = await db.cli('flush', '--json')
    expect(all.json()).toEqual({ flushed: before?.n })
    expect(before?.n).toBeGreaterThanOrEqual(1)
    expect(await db.sql`select id from iddqueue.messages where state = 'queued'`).toEqual([])
  })

  it('refuses an invalid queue name with exit 2, flushing nothing', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('safe')
    await broker.actor('safe', () => {}, { queue }).send()
    const run = await db.cli('flush', '--queue', 'bad queue')
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toContain('iddqueue flush: Invalid queue name "bad queue"')
    expect(await states(db.sql, queue)).toEqual({ queued: 1 })
  })
})
