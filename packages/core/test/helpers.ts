import { waitFor } from '@iddqueue/testing'
import { useBrokerFixture } from '@iddqueue/testing/vitest'
import { afterEach } from 'vitest'
import {
  type Broker,
  type BrokerEventName,
  type BrokerEvents,
  type BrokerOptions,
  createBroker,
} from '../src/index.js'
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

/**
 * Records every `event` the broker emits from now on (listeners run
 * synchronously at the emit), for a test to wait on with `until`.
 */
export function recordEvents<E extends BrokerEventName>(
  broker: Broker,
  event: E,
): BrokerEvents[E][] {
  const seen: BrokerEvents[E][] = []
  broker.on(event, (payload) => seen.push(payload))
  return seen
}

/** A claim statement of a worker, with when it started by `performance.now()`. */
export interface RecordedClaim {
  readonly workerId: string
  readonly count: number
  readonly startedAt: number
}

/**
 * Records the claims of the broker's workers from now on. A claim that started
 * after a point in time and returned `count: 0` proves the worker looked at
 * every row committed before that point and found none it may take. Pass
 * `claims` to record several brokers' workers in one list.
 */
export function recordClaims(broker: Broker, claims: RecordedClaim[] = []): RecordedClaim[] {
  broker.on('worker:claimed', ({ workerId, count, durationMs }) =>
    claims.push({ workerId, count, startedAt: performance.now() - durationMs }),
  )
  return claims
}

/** Resolves once each worker made an empty claim that started after `since`. */
export async function emptyClaimsSince(
  claims: readonly RecordedClaim[],
  workerIds: readonly string[],
  since: number,
  what = 'an empty claim of every worker',
): Promise<void> {
  await until(
    () =>
      workerIds.every((id) =>
        claims.some((c) => c.workerId === id && c.count === 0 && c.startedAt > since),
      ),
    10_000,
    what,
  )
}
