import { type Broker, createBroker } from '@iddqueue/core'
import { drainWithWorker, waitFor } from '@iddqueue/testing'
import { useBrokerFixture } from '@iddqueue/testing/vitest'
import type postgres from 'postgres'

export { uniqueQueue } from '@iddqueue/testing'

/**
 * The test file's database, a postgres.js client for assertions, and brokers
 * closed after each test: the shared fixture of `@iddqueue/testing`.
 */
export function setupDatabase() {
  return useBrokerFixture(createBroker)
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

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

/** The stored result rows of some messages, by id. */
export async function resultRows(sql: postgres.Sql, ids: readonly string[]) {
  const rows = await sql`select message_id::text as id, status, value, failure, expires_at
    from iddqueue.results where message_id = any(${[...ids]}::uuid[])`
  return new Map(rows.map((row) => [row.id as string, row]))
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
 * Resolves once the broker listens on its result channel and none of its
 * connections is running a query: its waiters are registered (the LISTEN is
 * made for the first one, before its first read) and no read is in flight,
 * so from here only a notification, or the safety re-read, answers them.
 */
export async function waitersBlocked(sql: postgres.Sql, broker: Broker) {
  const listen = `listen%${broker.namespace.channel('result')}%`
  await until(
    async () => {
      const [row] = await sql`select
          count(*) filter (where query ilike ${listen})::int as listening,
          count(*) filter (where state = 'active' and query not ilike 'listen%')::int as reading
        from pg_stat_activity
        where datname = current_database() and application_name = 'iddqueue'`
      return row?.listening === 1 && row?.reading === 0
    },
    10_000,
    'the result waiters to block',
  )
}
