import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
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

/** Forks a fixture script with arguments; resolves with its messages once it exits with code 0. */
export function runChild<T>(
  script: string,
  args: readonly string[],
  onMessage: (message: T) => void = () => {},
): { done: Promise<T[]>; kill: (signal: NodeJS.Signals) => void } {
  const child = fork(fileURLToPath(new URL(`./fixtures/${script}`, import.meta.url)), [...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const messages: T[] = []
  child.on('message', (message: T) => {
    messages.push(message)
    onMessage(message)
  })
  const done = new Promise<T[]>((resolve, reject) => {
    child.on('exit', (code, signal) => {
      if (code === 0) resolve(messages)
      else reject(new Error(`${script} exited with ${code ?? signal}`))
    })
  })
  return { done, kill: (signal) => child.kill(signal) }
}
