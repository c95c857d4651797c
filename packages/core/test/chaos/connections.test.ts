import { migrate } from '@iddqueue/schema'
import { createTestDatabase, startTestDatabase } from '@iddqueue/testing'
import postgres from 'postgres'
import { describe, expect, it } from 'vitest'
import { BrokerConnectionError, createBroker } from '../../src/index.js'
import { setupDatabase, sleep, until } from '../helpers.js'

const db = setupDatabase()

describe('lost connections', () => {
  it('a worker whose connections are terminated logs, reconnects and resumes', async () => {
    const broker = db.broker()
    const done = new Set<number>()
    const work = broker.actor('work', async (i: number) => {
      await sleep(2)
      done.add(i)
    })
    const worker = broker.worker({ concurrency: 4, pollIntervalMs: 500 })
    await worker.start()
    await broker.enqueueMany(Array.from({ length: 300 }, (_, i) => work.message(i)))
    await until(() => done.size >= 50, 10_000, 'some progress')
    const terminated = await db.sql`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and application_name = 'iddqueue'`
    expect(terminated.length).toBeGreaterThan(0)
    await broker.enqueueMany(Array.from({ length: 100 }, (_, i) => work.message(300 + i)))
    await until(() => done.size === 400, 20_000, 'every message after the reconnection')
    await broker.join({ timeoutMs: 20_000 })
    await worker.stop()
  }, 60_000)
})

describe('a PostgreSQL restart', () => {
  it('workers resume on their own; producers get BrokerConnectionError while it is down', async () => {
    const server = await startTestDatabase({ mode: 'embedded', log: () => {} })
    const database = await createTestDatabase(server.url)
    const admin = postgres(database.url, { max: 1, onnotice: () => {} })
    try {
      await migrate(admin)
      const broker = createBroker({ url: database.url })
      const done = new Set<number>()
      const work = broker.actor('work', async (i: number) => {
        await sleep(5)
        done.add(i)
      })
      const worker = broker.worker({ concurrency: 4, pollIntervalMs: 500 })
      await worker.start()
      await broker.enqueueMany(Array.from({ length: 200 }, (_, i) => work.message(i)))
      await until(() => done.size >= 20, 10_000, 'some progress')

      const restarting = server.restart!(1_500)
      await sleep(300)
      const refused = await work.send(-1).catch((error: unknown) => error)
      expect(BrokerConnectionError.isInstance(refused)).toBe(true)
      expect((refused as Error).cause).toBeDefined()
      await restarting

      await broker.enqueueMany(Array.from({ length: 50 }, (_, i) => work.message(200 + i)))
      await until(
        () => [...Array(250).keys()].every((i) => done.has(i)),
        30_000,
        'every message after the restart',
      )
      await broker.join({ timeoutMs: 20_000 })
      await worker.stop()
      await broker.close()
      const [row] =
        await admin`select count(*)::int as n from iddqueue.messages where state <> 'done'`
      expect(row?.n).toBe(0)
    } finally {
      await admin.end()
      await database.drop().catch(() => {})
      await server.stop()
    }
  }, 90_000)
})
