// The core and results features that matter in production, run through a
// real PgBouncer in transaction mode, as the production guide configures it:
// the broker's pool through the pooler with `prepare: false`, and `listenUrl`
// direct to PostgreSQL for the one LISTEN connection.
import { randomUUID } from 'node:crypto'
import { type ActorContext, type Broker, createBroker } from '@iddqueue/core'
import { findPgBouncer, type PgBouncer, startPgBouncer, waitFor } from '@iddqueue/testing'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { results } from '../src/index.js'

const db = useTestDatabase()
const binary = findPgBouncer()
// CI installs pgbouncer (.ci/run): there a missing binary fails the run
// instead of skipping this file and staying green. Elsewhere it skips.
if (binary === undefined) {
  if (!['', '0', 'false'].includes(process.env.CI ?? '')) {
    throw new Error(
      `pgbouncer is not installed, and CI=${process.env.CI} is set, where the PgBouncer tests must run: install it (apt-get install pgbouncer; .ci/run's SYSTEM_PACKAGES does)`,
    )
  }
  console.warn('[results] PgBouncer tests skipped: no pgbouncer binary (apt-get install pgbouncer)')
}
let bouncer: PgBouncer
let pooled: postgres.Sql
let direct: postgres.Sql
const brokers: Broker[] = []

beforeAll(async () => {
  if (binary === undefined) return
  bouncer = await startPgBouncer({ serverUrl: db.url, defaultPoolSize: 5 })
  pooled = postgres(pooledUrl(), { prepare: false, max: 4, onnotice: () => {} })
  direct = postgres(db.url, { max: 2, onnotice: () => {} })
})
afterEach(async () => {
  for (const broker of brokers.splice(0)) await broker.close()
})
afterAll(async () => {
  await pooled?.end()
  await direct?.end()
  await bouncer?.stop()
})

function pooledUrl(): string {
  return bouncer.url(new URL(db.url).pathname.slice(1))
}

/** A broker as the production guide configures it behind PgBouncer. */
function pooledBroker(): Broker {
  const broker = createBroker({
    url: pooledUrl(),
    prepare: false,
    listenUrl: db.url,
    plugins: [results()],
  })
  brokers.push(broker)
  return broker
}

const queue = () => `pgb_${randomUUID().slice(0, 8)}`

async function states(q: string): Promise<Record<string, number>> {
  const rows =
    await direct`select state, count(*)::int as n from iddqueue.messages where queue = ${q} group by state`
  return Object.fromEntries(rows.map((row) => [row.state, row.n]))
}

describe.skipIf(binary === undefined)('through PgBouncer in transaction mode', () => {
  it('sends, batches, deduplicates and enqueues in a transaction; a worker runs them and results are waited for', async () => {
    const broker = pooledBroker()
    const q = queue()
    const add = broker.actor('pgb_add', (a: number, b: number) => a + b, {
      queue: q,
      storeResults: true,
    })

    const single = await add.send(1, 2)
    const batch = await broker.enqueueMany(Array.from({ length: 50 }, (_, i) => add.message(i, i)))
    const first = await add.sendWithOptions({ args: [5, 5], dedupKey: 'once', dedupTtlMs: 60_000 })
    const again = await add.sendWithOptions({ args: [6, 6], dedupKey: 'once', dedupTtlMs: 60_000 })
    expect(again.id).toBe(first.id)
    // The caller's transaction runs through the pooler too.
    const committed = await pooled.begin(async (tx) =>
      add.sendWithOptions({ args: [7, 7], transaction: tx }),
    )
    await expect(
      pooled.begin(async (tx) => {
        await add.sendWithOptions({ args: [8, 8], transaction: tx })
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')

    const worker = broker.worker({ queues: [q], concurrency: 8 })
    await worker.start()
    expect(await single.result({ timeoutMs: 20_000 })).toBe(3)
    expect(await committed.result({ timeoutMs: 20_000 })).toBe(14)
    await broker.join({ queues: [q], timeoutMs: 20_000 })
    expect(await states(q)).toEqual({ done: 1 + 50 + 1 + 1 })
    expect(await batch[49]?.result({ block: false })).toBe(98)
  })

  it('runs with the pooler as its only connection (pollOnly, no listenUrl): sends, a worker runs them, a resume reaches it, results are waited for', async () => {
    const broker = createBroker({
      url: pooledUrl(),
      prepare: false,
      pollOnly: true,
      plugins: [results({ pollIntervalMs: 50 })],
    })
    brokers.push(broker)
    const q = queue()
    const add = broker.actor('pgb_poll_add', (a: number, b: number) => a + b, {
      queue: q,
      storeResults: true,
    })

    // Paused before the worker starts, which reads the pause at its start:
    // the messages wait, and only the resume lets them run. With no LISTEN
    // anywhere, the worker learns of the resume by its heartbeat's re-read.
    await broker.pause(q)
    const worker = broker.worker({ queues: [q], pollIntervalMs: 50, heartbeatIntervalMs: 100 })
    await worker.start()
    const single = await add.send(20, 22)
    const batch = await broker.enqueueMany(Array.from({ length: 20 }, (_, i) => add.message(i, 1)))
    const first = await add.sendWithOptions({ args: [1, 1], dedupKey: 'poll', dedupTtlMs: 60_000 })
    const again = await add.sendWithOptions({ args: [2, 2], dedupKey: 'poll', dedupTtlMs: 60_000 })
    expect(again.id).toBe(first.id)
    const waiting = single.result({ timeoutMs: 30_000 })
    expect(await states(q)).toEqual({ queued: 1 + 20 + 1 })

    // Nothing of this broker listens: no session of this database is left
    // whose statement was a LISTEN. (Waited for, since the LISTEN
    // connections of the brokers closed after the previous tests may take
    // a moment to go; one of this running broker would never go.)
    await waitFor(
      async () => {
        const [row] = await direct`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and query ilike 'listen%'`
        return row?.n === 0
      },
      { timeoutMs: 10_000, message: 'no LISTEN session on the database' },
    )

    await broker.resume(q)
    expect(await waiting).toBe(42)
    expect(
      await Promise.all(batch.map((message) => message.result({ timeoutMs: 30_000 }))),
    ).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    expect(await first.result({ timeoutMs: 30_000 })).toBe(2)
    await broker.join({ queues: [q], timeoutMs: 30_000 })
    expect(await states(q)).toEqual({ done: 1 + 20 + 1 })
    const [stored] = await direct`select count(*)::int as n from iddqueue.results r
      join iddqueue.messages m on m.id = r.message_id where m.queue = ${q} and r.status = 'success'`
    expect(stored?.n).toBe(1 + 20 + 1)
    await worker.stop()
    const [registered] =
      await direct`select count(*)::int as n from iddqueue.workers where id = ${worker.id}`
    expect(registered?.n).toBe(0)
  })

  it('pauses and resumes a queue, and cancels queued and running messages', async () => {
    const broker = pooledBroker()
    const q = queue()
    let started!: () => void
    const running = new Promise<void>((resolve) => {
      started = resolve
    })
    const slow = broker.actor(
      'pgb_slow',
      async (ctx: ActorContext) => {
        started()
        await new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        )
      },
      { queue: q, maxRetries: 0 },
    )
    const quick = broker.actor('pgb_quick', () => 'ok', { queue: q, storeResults: true })

    await broker.pause(q)
    expect(await broker.isPaused(q)).toBe(true)
    const worker = broker.worker({ queues: [q] })
    await worker.start()
    const held = await quick.send()
    const delayed = await quick.sendWithOptions({ args: [], delayMs: 3_600_000 })
    expect((await broker.cancel(delayed.id)).status).toBe('cancelled')
    expect(await states(q)).toEqual({ queued: 1, cancelled: 1 })

    await broker.resume(q)
    expect(await held.result({ timeoutMs: 20_000 })).toBe('ok')

    const job = await slow.send()
    await running
    expect((await broker.cancel(job.id, { timeoutMs: 10_000 })).status).toBe('requested')
    await broker.join({ queues: [q], timeoutMs: 20_000 })
    expect(await states(q)).toEqual({ done: 1, cancelled: 2 })
  })

  it('recovers the messages of a worker that is gone', async () => {
    const broker = pooledBroker()
    const q = queue()
    const echo = broker.actor('pgb_echo', (n: number) => n, { queue: q })
    await broker.enqueueMany([echo.message(1), echo.message(2), echo.message(3)])
    // A worker that claimed them and died without deregistering.
    await direct`update iddqueue.messages set state = 'consumed', worker_id = ${randomUUID()}, attempts = 1
                  where queue = ${q}`
    expect(await broker.recover()).toBe(3)
    expect(await states(q)).toEqual({ queued: 3 })
    const [row] =
      await direct`select max(retries)::int as retries from iddqueue.messages where queue = ${q}`
    expect(row?.retries).toBe(0) // the retry budget is intact
  })
  it('leads maintenance through the pooler: recovery and purge run under transaction-scoped locks that leave no session behind', async () => {
    // Two workers share PgBouncer's server connections. The rescuer's and the
    // purge's leadership are transaction-scoped advisory locks
    // (pg_try_advisory_xact_lock), released at each commit, and liveness is
    // the heartbeat row, not a session lock: so nothing here needs a session,
    // and a server connection handed to another client carries no lock.
    const q = queue()
    const dead = randomUUID()
    const producer = pooledBroker()
    const echo = producer.actor('pgb_rescued', (n: number) => n, { queue: q })
    await producer.enqueueMany([echo.message(1), echo.message(2), echo.message(3)])
    await direct`insert into iddqueue.workers (id, host, pid, queues, concurrency, started_at, heartbeat_at)
                  values (${dead}, 'gone', 1, ${[q]}, 1, now() - interval '1 hour', now() - interval '1 hour')`
    await direct`update iddqueue.messages set state = 'consumed', worker_id = ${dead}, attempts = 1
                  where queue = ${q}`
    const options = {
      queues: [q],
      heartbeatIntervalMs: 100,
      staleAfterMs: 10_000,
      purgeIntervalMs: 100,
      retentionMs: 1,
    }
    const workers = [pooledBroker(), pooledBroker()].map((broker) => {
      broker.actor('pgb_rescued', (n: number) => n, { queue: q })
      return broker.worker(options)
    })
    for (const worker of workers) await worker.start()
    // Recovered by the leader, run, then purged by the leader: every row of the queue gone.
    for (let i = 0; ; i++) {
      const [row] =
        await direct`select count(*)::int as n from iddqueue.messages where queue = ${q}`
      if (row?.n === 0) break
      if (i > 600) throw new Error(`messages still there: ${JSON.stringify(await states(q))}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const [gone] = await direct`select count(*)::int as n from iddqueue.workers where id = ${dead}`
    expect(gone?.n).toBe(0)
    for (const worker of workers) await worker.stop()
    // PgBouncer keeps its server connections open: a session lock would still
    // be held by one of them while it sits idle between transactions. (A
    // transaction-scoped lock of a transaction in flight is not one.)
    const locks = await direct`select count(*)::int as n
        from pg_locks l join pg_stat_activity a on a.pid = l.pid
       where l.locktype = 'advisory' and a.datname = current_database() and a.state = 'idle'`
    expect(locks[0]?.n).toBe(0)
  })
})
