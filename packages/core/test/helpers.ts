import { useTestDatabase } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { type Broker, type BrokerOptions, createBroker } from '../src/index.js'

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
    // Every pool the brokers opened is closed: no iddqueue session remains.
    for (let i = 0; i < 50; i++) {
      const [row] = await sql`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and application_name = 'iddqueue'`
      if (row?.n === 0) return
      await sleep(20)
    }
    const [row] = await sql`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name = 'iddqueue'`
    expect(row?.n, 'iddqueue connections left open after the test').toBe(0)
  })
  afterAll(() => sql?.end())
  return {
    get url() {
      return database.url
    },
    get sql() {
      return sql
    },
    /** Resolves once every broker of the test has sent the wake-ups of its committed sends. */
    async wakeUpsSent(): Promise<void> {
      for (const broker of brokers) await broker.context.waker.drain()
    },
    /** A broker on the test database, closed after the test. */
    broker(options: Omit<BrokerOptions, 'url'> & { url?: string } = {}): Broker {
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

/** Rows of the messages table by state, as { state: count }, optionally for one queue. */
export async function states(
  sql: postgres.Sql,
  options: { queue?: string; schema?: string; prefix?: string } = {},
): Promise<Record<string, number>> {
  const table = `"${options.schema ?? 'iddqueue'}"."${options.prefix ?? ''}messages"`
  const rows = options.queue
    ? await sql.unsafe(
        `select state, count(*)::int as n from ${table} where queue = $1 group by state`,
        [options.queue],
      )
    : await sql.unsafe(`select state, count(*)::int as n from ${table} group by state`)
  return Object.fromEntries(rows.map((r) => [r.state, r.n]))
}

/**
 * Collects NOTIFY payloads on a channel until stopped. `settled()` returns
 * (and forgets) everything received so far, after sending a marker and
 * waiting for it: notifications arrive in commit order, so anything
 * committed before the marker has arrived by then, without sleeping.
 */
export async function collectNotifications(sql: postgres.Sql, channel: string) {
  const marker = `__marker_${crypto.randomUUID()}__`
  const payloads: string[] = []
  const listener = await sql.listen(channel, (payload) => payloads.push(payload))
  return {
    payloads,
    async settled(): Promise<string[]> {
      await sql`select pg_notify(${channel}, ${marker})`
      await until(() => payloads.includes(marker), 5_000, 'the marker notification')
      return payloads.splice(0).filter((payload) => payload !== marker)
    },
    stop: () => listener.unlisten(),
  }
}
