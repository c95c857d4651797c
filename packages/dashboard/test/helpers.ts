import { type Broker, type BrokerOptions, createBroker } from '@iddqueue/core'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'

/**
 * The test file's database (cloned from the migrated template), a postgres.js
 * client for assertions, and brokers that are closed after each test. The
 * afterEach fails when a test leaves a worker running or a pool open.
 */
export function setupDatabase() {
  const database = useTestDatabase()
  const brokers = new Set<Broker>()
  let sql: postgres.Sql
  beforeAll(() => {
    sql = postgres(database.url, { max: 4, onnotice: () => {} })
  })
  afterEach(async () => {
    const open = [...brokers]
    brokers.clear()
    for (const broker of open) await broker.close()
    const count = async () => {
      const [row] = await sql`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and application_name = 'iddqueue'`
      return row?.n as number
    }
    for (let i = 0; i < 50 && (await count()) > 0; i++) await sleep(20)
    expect(await count(), 'iddqueue connections left open after the test').toBe(0)
  })
  afterAll(() => sql?.end())
  return {
    get url() {
      return database.url
    },
    get sql() {
      return sql
    },
    /** A broker on the test database, closed after the test. */
    broker(options: Omit<BrokerOptions, 'url'> = {}): Broker {
      const broker = createBroker({ url: database.url, ...options })
      brokers.add(broker)
      return broker
    },
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves when `check` returns true, or fails after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(10)
  }
}

/** A queue name no other test uses. */
export function uniqueQueue(label = 'q'): string {
  return `${label}_${crypto.randomUUID().slice(0, 8)}`
}

/** Runs a worker on `queues` until they hold no queued or running message, then stops it. */
export async function drain(broker: Broker, queues: string[], concurrency = 4) {
  const worker = broker.worker({ queues, concurrency, pollIntervalMs: 50 })
  await worker.start()
  await broker.join({ queues, timeoutMs: 20_000 })
  await worker.stop()
}

/**
 * Inserts hand-built message rows: `state`, `eta` and `updated_at` as SQL
 * interval offsets from now (`'-2 minutes'`, `'1 hour'`).
 */
export async function insertRows(
  sql: postgres.Sql,
  queue: string,
  rows: readonly { state: string; eta?: string; updated?: string; count?: number }[],
) {
  for (const row of rows) {
    await sql`insert into iddqueue.messages (id, queue, actor, state, eta, updated_at, worker_id)
      select gen_random_uuid(), ${queue}, 'handmade', ${row.state},
             now() + ${row.eta ?? '0 seconds'}::interval, now() + ${row.updated ?? '0 seconds'}::interval,
             case when ${row.state} = 'consumed' then gen_random_uuid() end
        from generate_series(1, ${row.count ?? 1})`
  }
}
