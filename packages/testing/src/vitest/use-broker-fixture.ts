import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { useTestDatabase } from './use-test-database.js'

/** What the fixture needs of a broker: `@iddqueue/core`'s `Broker` fits. */
export interface FixtureBroker {
  close(): Promise<void>
  migrate(): Promise<unknown>
}

/**
 * Options of {@link useBrokerFixture}.
 *
 * @example
 * const db = useBrokerFixture(createBroker, { migrate: true })
 */
export interface BrokerFixtureOptions {
  /**
   * Run `broker.migrate()` once before the file's tests, for a database that
   * is not cloned from a migrated template. Default `false`.
   */
  readonly migrate?: boolean
  /** The application name of the broker's connections, checked for leaks. Default `'iddqueue'`. */
  readonly applicationName?: string
}

/**
 * The test file's database, a postgres.js client for assertions, and
 * brokers that are closed after each test. See {@link useBrokerFixture}.
 *
 * @example
 * const db = useBrokerFixture(createBroker)
 * it('stores a message', async () => {
 *   const broker = db.broker()
 *   await broker.actor('hello', () => {}).send()
 *   expect(await messageStates(db.sql)).toEqual({ queued: 1 })
 * })
 */
export interface BrokerFixture<B, O> {
  /** The test database's URL. */
  readonly url: string
  /** A postgres.js client on the test database (closed after the file). */
  readonly sql: postgres.Sql
  /** A broker on the test database, closed after the test. */
  broker(options?: Partial<O>): B
}

/**
 * One test file's database and brokers, for iddqueue's own tests and for
 * users' actor tests alike: the database comes from {@link useTestDatabase},
 * brokers made with `fixture.broker()` are closed after each test, and the
 * `afterEach` fails when a test left a worker, pool or listener open (an
 * iddqueue connection still in `pg_stat_activity`). Pass your
 * `createBroker`, so the fixture works with any copy of `@iddqueue/core`.
 *
 * @example
 * import { createBroker } from '@iddqueue/core'
 * import { useBrokerFixture } from '@iddqueue/testing/vitest'
 *
 * const db = useBrokerFixture(createBroker)
 * it('runs', async () => {
 *   const broker = db.broker({ plugins: [results()] })
 *   // ...
 * })
 */
export function useBrokerFixture<B extends FixtureBroker, O extends { readonly url?: string }>(
  createBroker: (options: O) => B,
  options: BrokerFixtureOptions = {},
): BrokerFixture<B, O> {
  const database = useTestDatabase()
  const applicationName = options.applicationName ?? 'iddqueue'
  const brokers = new Set<B>()
  let sql: postgres.Sql | undefined
  const openConnections = async (): Promise<number> => {
    const [row] = await sql!`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name = ${applicationName}`
    return (row?.n as number | undefined) ?? 0
  }
  beforeAll(async () => {
    sql = postgres(database.url, { max: 4, onnotice: () => {} })
    if (options.migrate) {
      const broker = createBroker({ url: database.url } as O)
      try {
        await broker.migrate()
      } finally {
        await broker.close()
      }
    }
  })
  afterEach(async () => {
    const open = [...brokers]
    brokers.clear()
    for (const broker of open) await broker.close()
    // A closed pool's sessions end shortly after close() resolves: wait for
    // the server to drop them, then fail if any remains.
    let left = await openConnections()
    for (let i = 0; i < 100 && left > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      left = await openConnections()
    }
    expect(left, 'iddqueue connections left open after the test').toBe(0)
  })
  afterAll(() => sql?.end())
  return {
    get url() {
      return database.url
    },
    get sql() {
      if (!sql) throw new Error('useBrokerFixture: sql is available inside tests and hooks only')
      return sql
    },
    broker(brokerOptions: Partial<O> = {}): B {
      const broker = createBroker({ url: database.url, ...brokerOptions } as O)
      brokers.add(broker)
      return broker
    },
  }
}
