import { type Broker, type BrokerOptions, createBroker } from '@iddqueue/core'
import { drainWithWorker, waitFor } from '@iddqueue/testing'
import { useBrokerFixture } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { scheduler } from '../src/index.js'

export { uniqueQueue } from '@iddqueue/testing'

/**
 * The test file's database, a postgres.js client for assertions, and brokers
 * with the scheduler plugin (unless `plugins` is given), closed after each
 * test: the shared fixture of `@iddqueue/testing`, whose afterEach fails when
 * a test leaves a worker, pool or listener open.
 */
export function setupDatabase() {
  const fixture = useBrokerFixture(createBroker)
  return {
    get url() {
      return fixture.url
    },
    get sql() {
      return fixture.sql
    },
    /** A broker on the test database, closed after the test. */
    broker(options: Partial<BrokerOptions> = {}): Broker {
      return fixture.broker({ plugins: [scheduler()], ...options })
    },
  }
}

/** Resolves when `check` returns true, or fails after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
) {
  await waitFor(check, { timeoutMs, intervalMs: 10, message: what })
}

/** Runs a worker on `queues` until they hold no queued or running message, then stops it. */
export function drain(broker: Broker, queues: string[], concurrency = 4) {
  return drainWithWorker(broker, { queues, concurrency })
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

/**
 * A postgres.js client on `url` that records the text of every statement it
 * sends, in order: give it to a broker as `sql` to see exactly what the
 * broker and its plugins ask PostgreSQL. Close it after the broker.
 */
export function recordingSql(url: string) {
  const statements: string[] = []
  const sql = postgres(url, {
    max: 4,
    onnotice: () => {},
    connection: { application_name: 'iddqueue' },
    debug: (_connection, query) => {
      statements.push(query)
    },
  })
  return { sql, statements }
}
