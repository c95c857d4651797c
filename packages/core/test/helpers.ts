import { waitFor } from '@iddqueue/testing'
import { useBrokerFixture } from '@iddqueue/testing/vitest'
import { afterEach } from 'vitest'
import { type Broker, type BrokerOptions, createBroker } from '../src/index.js'
import type { BrokerClass } from '../src/internal.js'

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
  const fixture = useBrokerFixture(createBroker)
  const made = new Set<Broker>()
  afterEach(() => made.clear())
  return {
    get url() {
      return fixture.url
    },
    get sql() {
      return fixture.sql
    },
    /** A broker on the test database, closed after the test. */
    broker(options: Partial<BrokerOptions> = {}): Broker {
      const broker = fixture.broker(options)
      made.add(broker)
      return broker
    },
    /** Resolves once every broker of the test has sent the wake-ups of its committed sends. */
    async wakeUpsSent(): Promise<void> {
      for (const broker of made) await (broker as unknown as BrokerClass).context.waker.drain()
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
  await waitFor(check, { timeoutMs, intervalMs: 10, message: what })
}
