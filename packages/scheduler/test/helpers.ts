import { type Broker, type BrokerOptions, createBroker } from '@iddqueue/core'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { scheduler } from '../src/index.js'

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
    /** A broker on the test database with the scheduler plugin (unless `plugins` is given), closed after the test. */
    broker(options: Omit<BrokerOptions, 'url'> = {}): Broker {
      const broker = createBroker({ url: database.url, plugins: [scheduler()], ...options })
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

/** The messages a schedule published, oldest intended time first. */
export async function scheduledMessages(sql: postgres.Sql, name: string) {
  const rows = await sql`select id::text as id, queue, actor, args, state, options
    from iddqueue.messages where options -> 'schedule' ->> 'name' = ${name}
    order by options -> 'schedule' ->> 'intendedAt'`
  return rows.map((row) => ({
    id: row.id as string,
    queue: row.queue as string,
    actor: row.actor as string,
    args: row.args as unknown[],
    state: row.state as string,
    intendedAt: (row.options as { schedule: { intendedAt: string } }).schedule.intendedAt,
  }))
}

/** Moves a schedule's next run (and its interval grid) `ms` into the past: an outage without waiting for one. */
export async function rewind(sql: postgres.Sql, name: string, ms: number) {
  await sql`update iddqueue.schedules set next_run_at = next_run_at - ${ms} * interval '1 millisecond',
    anchor_at = anchor_at - ${ms} * interval '1 millisecond' where name = ${name}`
}

/** The error a promise rejects with (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  let value: unknown
  try {
    value = await promise
  } catch (error) {
    return error
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`)
}
