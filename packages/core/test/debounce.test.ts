import postgres from 'postgres'
import { describe, expect, it } from 'vitest'
import { InvalidOptionError } from '../src/index.js'
import { setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

const TTL = 3_600_000

async function rowsOf(queue: string) {
  return db.sql`select id, state, args, priority, eta from iddqueue.messages
                 where queue = ${queue} order by enqueued_at, id`
}

describe('debounce (dedupMode: replace)', () => {
  it('replaces the args, eta and priority of the queued message holding the key', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('debounce')
    const reindex = broker.actor('reindex', (_doc: string, _rev: number) => {}, { queue })
    const first = await reindex.sendWithOptions({
      args: ['doc', 1],
      delayMs: 60_000,
      dedupKey: 'doc',
      dedupTtlMs: TTL,
      dedupMode: 'replace',
    })
    const eta = new Date(Date.now() + 120_000)
    const second = await reindex.sendWithOptions({
      args: ['doc', 2],
      eta,
      priority: 7,
      dedupKey: 'doc',
      dedupTtlMs: TTL,
      dedupMode: 'replace',
    })
    expect(second.id).toBe(first.id)
    expect(second.args).toEqual(['doc', 2])
    expect(second.priority).toBe(7)
    const rows = await rowsOf(queue)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ id: first.id, state: 'queued', args: ['doc', 2], priority: 7 })
    expect(rows[0]?.eta).toEqual(eta)
    // The default mode still returns the original: now the replaced one.
    const kept = await reindex.sendWithOptions({
      args: ['doc', 3],
      dedupKey: 'doc',
      dedupTtlMs: TTL,
    })
    expect([kept.id, kept.args]).toEqual([first.id, ['doc', 2]])
  })

  it('leaves exactly one queued message, holding the last writer’s args, under 20 concurrent senders', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('race')
    const job = broker.actor('job', (_n: number) => {}, { queue })
    const log = `race_log_${queue}`
    await db.sql.unsafe(`create table ${log} (n int, seq bigserial)`)
    const senders = postgres(db.url, { max: 20, onnotice: () => {} })
    try {
      const sent = await Promise.all(
        Array.from({ length: 20 }, (_, n) =>
          senders.begin(async (tx) => {
            const message = await job.sendWithOptions({
              args: [n],
              dedupKey: 'one',
              dedupTtlMs: TTL,
              dedupMode: 'replace',
              transaction: tx,
            })
            // The key's row lock is held from the send to the commit, so the
            // order of these sequence numbers is the order of the commits.
            await tx.unsafe(`insert into ${log} (n) values ($1)`, [n])
            return message
          }),
        ),
      )
      const rows = await rowsOf(queue)
      expect(rows).toHaveLength(1)
      expect(rows[0]?.state).toBe('queued')
      expect(new Set(sent.map((m) => m.id))).toEqual(new Set([rows[0]?.id]))
      const [last] = await db.sql.unsafe(`select n from ${log} order by seq desc limit 1`)
      expect(rows[0]?.args).toEqual([last?.n])
      const [key] = await db.sql`select message_id, message from iddqueue.deduplication
                                  where queue = ${queue} and key = 'one'`
      expect([key?.message_id, key?.message.args]).toEqual([rows[0]?.id, [last?.n]])
    } finally {
      await senders.end()
    }
  })

  it('sends a new message once the previous one has started, and the key follows it', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('started')
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const started: number[] = []
    const job = broker.actor(
      'job',
      async (n: number) => {
        started.push(n)
        if (n === 1) await gate
      },
      { queue },
    )
    const options = { dedupKey: 'k', dedupTtlMs: TTL, dedupMode: 'replace' } as const
    const first = await job.sendWithOptions({ args: [1], ...options })
    const worker = broker.worker({ queues: [queue], concurrency: 1, prefetch: 0 })
    await worker.start()
    await until(() => started.includes(1), 10_000, 'the first message to start')
    const second = await job.sendWithOptions({ args: [2], ...options, delayMs: 60_000 })
    expect(second.id).not.toBe(first.id)
    const third = await job.sendWithOptions({ args: [3], ...options, delayMs: 60_000 })
    expect(third.id).toBe(second.id)
    release()
    await until(async () => (await rowsOf(queue))[0]?.state === 'done', 10_000, 'first done')
    await worker.stop()
    const rows = await rowsOf(queue)
    expect(rows.map((r) => [r.id, r.state, r.args])).toEqual([
      [first.id, 'done', [1]],
      [second.id, 'queued', [3]],
    ])
    expect(started).toEqual([1])
  })

  it('sends a new message when the holder was cancelled', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('cancelled')
    const job = broker.actor('job', (_n: number) => {}, { queue })
    const options = { dedupKey: 'k', dedupTtlMs: TTL, dedupMode: 'replace' } as const
    const first = await job.sendWithOptions({ args: [1], ...options, delayMs: 60_000 })
    await broker.cancel(first.id)
    const second = await job.sendWithOptions({ args: [2], ...options, delayMs: 60_000 })
    expect(second.id).not.toBe(first.id)
    expect((await rowsOf(queue)).map((r) => r.state)).toEqual(['cancelled', 'queued'])
  })

  it('merges entries of one batch that share a key: one message, the last entry’s args', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('batch')
    const job = broker.actor('job', (_n: number) => {}, { queue })
    const options = { dedupKey: 'k', dedupTtlMs: TTL, dedupMode: 'replace' } as const
    const sent = await broker.enqueueMany([
      { message: job.message(1), ...options },
      job.message(99),
      { message: job.message(2), ...options },
      { message: job.message(3), ...options },
    ])
    expect(sent[0]?.id).toBe(sent[2]?.id)
    expect(sent[0]?.id).toBe(sent[3]?.id)
    expect(sent.map((m) => m.args)).toEqual([[3], [99], [3], [3]])
    const rows = await rowsOf(queue)
    expect(rows.map((r) => r.args).sort()).toEqual([[3], [99]])
    // A later send replaces the merged message.
    const later = await job.sendWithOptions({ args: [4], ...options })
    expect(later.id).toBe(sent[0]?.id)
    const [key] = await db.sql`select message from iddqueue.deduplication where queue = ${queue}`
    expect(key?.message.args).toEqual([4])
  })

  it('refuses a bad dedupMode before any SQL', async () => {
    const broker = db.broker()
    const job = broker.actor('job', () => {})
    await expect(
      job.sendWithOptions({
        args: [],
        dedupKey: 'k',
        dedupTtlMs: TTL,
        dedupMode: 'merge' as never,
      }),
    ).rejects.toThrow(InvalidOptionError)
    await expect(job.sendWithOptions({ args: [], dedupMode: 'replace' })).rejects.toThrow(
      /dedupMode replace needs a dedupKey/,
    )
  })
})
