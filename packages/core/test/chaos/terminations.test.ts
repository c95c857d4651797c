import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBroker } from '../../src/index.js'
import { sleep, until } from '../helpers.js'
import { type OwnedPostgres, ownPostgres } from './harness/owned-postgres.js'
import { enqueueAll } from './harness/producers.js'

// Server-side terminations of every iddqueue connection, on a PostgreSQL
// this file owns (the terminations pick its connections by application_name).

let pg: OwnedPostgres
beforeAll(async () => {
  pg = await ownPostgres()
}, 120_000)
afterAll(() => pg?.stop())

const START_MS = Number(process.env.CHAOS_RESUME_MS ?? 1_000)

describe('pg_terminate_backend of every iddqueue connection, repeatedly, during a drain', () => {
  it('loses nothing; the LISTEN connection comes back and an idle worker starts a new message within 1 s', async () => {
    const queue = `terminate_${crypto.randomUUID().slice(0, 8)}`
    const broker = createBroker({
      url: pg.url,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    })
    const count = 5_000
    const ran = new Set<number>()
    const startedAt = new Map<number, number>()
    const work = broker.actor(
      'work',
      async (i: number) => {
        startedAt.set(i, performance.now())
        await sleep(1)
        ran.add(i)
      },
      { queue },
    )
    // A long poll interval: only a notification on the LISTEN connection wakes it promptly.
    const worker = broker.worker({ concurrency: 8, pollIntervalMs: 30_000 })
    await worker.start()
    await enqueueAll(
      count,
      (i) => work.message(i),
      (m) => broker.enqueueMany(m),
    )
    let terminated = 0
    for (let round = 0; round < 10 && ran.size < count; round++) {
      await until(() => ran.size > (round * count) / 12, 60_000, `round ${round}`)
      const rows = await pg.sql`select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and application_name = 'iddqueue' and pid <> pg_backend_pid()`
      terminated += rows.length
    }
    await until(() => ran.size === count, 120_000, 'every message to run')
    await broker.join({ queues: [queue], timeoutMs: 60_000 })
    // Now idle, after one more termination: a new message wakes it through LISTEN.
    await pg.sql`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and application_name = 'iddqueue'`
    await until(
      async () => {
        const [row] = await pg.sql`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and application_name = 'iddqueue' and query ilike 'listen%'`
        return (row?.n ?? 0) > 0
      },
      30_000,
      'the LISTEN connection to come back',
    )
    const sentAt = performance.now()
    await work.send(count)
    await until(() => ran.has(count), 30_000, 'the idle worker to start the new message')
    const startMs = startedAt.get(count)! - sentAt
    await broker.join({ queues: [queue], timeoutMs: 30_000 })
    const [left] = await pg.sql`select count(*)::int as n from iddqueue.messages
      where queue = ${queue} and state <> 'done'`
    console.info(
      `chaos terminations: ${terminated} connections terminated over 10 rounds during a ${count}-message drain; nothing left (${left?.n}); idle worker started a new message ${Math.round(startMs)} ms after the send`,
    )
    expect(left?.n).toBe(0)
    expect(worker.state).toBe('running')
    expect(startMs).toBeLessThan(START_MS)
    await worker.stop()
    await broker.close()
  }, 300_000)
})
