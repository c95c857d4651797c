import { type Broker, type BrokerOptions, createBroker } from '@iddqueue/core'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { type CliIo, main } from '../src/index.js'

/** What a CLI run printed and returned. */
export interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  /** stdout parsed as JSON. */
  json<T = Record<string, unknown>>(): T
}

/** Runs the CLI in-process with captured output, the given environment and working directory. */
export async function runCli(
  argv: readonly string[],
  env: Record<string, string | undefined> = {},
  cwd?: string,
): Promise<CliRun> {
  let stdout = ''
  let stderr = ''
  const io: CliIo = {
    out: (text) => {
      stdout += text
    },
    err: (text) => {
      stderr += text
    },
    env,
    cwd,
  }
  const code = await main(argv, io)
  return { code, stdout, stderr, json: () => JSON.parse(stdout) }
}

/**
 * The test file's database, migrated once; a postgres.js client for
 * assertions; brokers closed after each test; and `cli(...)`, which runs the
 * CLI against the database. The afterEach fails when a test (or the CLI)
 * leaves an iddqueue connection open.
 */
export function setupDatabase() {
  const database = useTestDatabase()
  const brokers = new Set<Broker>()
  let sql: postgres.Sql
  beforeAll(async () => {
    sql = postgres(database.url, { max: 2, onnotice: () => {} })
    const broker = createBroker({ url: database.url })
    await broker.migrate()
    await broker.close()
  })
  afterEach(async () => {
    for (const broker of brokers) await broker.close()
    brokers.clear()
    let open = -1
    for (let i = 0; i < 50 && open !== 0; i++) {
      if (i > 0) await sleep(20)
      const [row] = await sql`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and application_name = 'iddqueue'`
      open = row?.n ?? 0
    }
    expect(open, 'iddqueue connections left open after the test').toBe(0)
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
    /** Runs the CLI with `--url` set to the test database. */
    cli(...argv: string[]): Promise<CliRun> {
      return runCli(['--url', database.url, ...argv])
    },
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A queue name no other test uses. */
export function uniqueQueue(label = 'q'): string {
  return `${label}_${crypto.randomUUID().slice(0, 8)}`
}

/** Rows of one queue by state, as { state: count }. */
export async function states(sql: postgres.Sql, queue: string): Promise<Record<string, number>> {
  const rows = await sql`select state, count(*)::int as n from iddqueue.messages
    where queue = ${queue} group by state`
  return Object.fromEntries(rows.map((row) => [row.state, row.n]))
}

/**
 * Sends `count` messages to an actor that always fails, without retries,
 * and runs a worker until they are all rejected. Returns their ids in order.
 */
export async function rejectMessages(broker: Broker, queue: string, count = 1): Promise<string[]> {
  const actor = broker.actor(
    `fails_${queue}`,
    (n: number) => {
      throw new TypeError(`boom ${n}`)
    },
    { queue, maxRetries: 0 },
  )
  const sent = await broker.enqueueMany(Array.from({ length: count }, (_, i) => actor.message(i)))
  const worker = broker.worker({ queues: [queue] })
  await worker.start()
  await broker.join({ queues: [queue] })
  await worker.stop()
  return sent.map((message) => message.id)
}
