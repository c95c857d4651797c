import { type Broker, createBroker } from '@iddqueue/core'
import { drainWithWorker, waitFor } from '@iddqueue/testing'
import { useBrokerFixture } from '@iddqueue/testing/vitest'
import type postgres from 'postgres'

export { uniqueQueue } from '@iddqueue/testing'

/**
 * The test file's database, a postgres.js client for assertions, and brokers
 * closed after each test: the shared fixture of `@iddqueue/testing`, whose
 * afterEach fails when a test leaves a worker, pool or listener open.
 */
export function setupDatabase() {
  return useBrokerFixture(createBroker)
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
