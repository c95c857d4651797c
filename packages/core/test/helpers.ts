import { waitFor } from '@iddqueue/testing'
import { useBrokerFixture } from '@iddqueue/testing/vitest'
import { createBroker } from '../src/index.js'

export {
  collectNotifications,
  messageStates as states,
  uniqueQueue,
} from '@iddqueue/testing'

/**
 * The test file's database, a postgres.js client for assertions, and brokers
 * closed after each test: the shared fixture of `@iddqueue/testing`, whose
 * afterEach fails when a test leaves a worker, pool or listener open.
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
