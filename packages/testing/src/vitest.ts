export type { GlobalSetup, GlobalSetupOptions } from './vitest/create-global-setup.js'
export { createGlobalSetup } from './vitest/create-global-setup.js'
export { describePublishedTypes } from './vitest/describe-published-types.js'
export type {
  BrokerFixture,
  BrokerFixtureOptions,
  FixtureBroker,
} from './vitest/use-broker-fixture.js'
export { useBrokerFixture } from './vitest/use-broker-fixture.js'
export type { UsedTestDatabase } from './vitest/use-test-database.js'
export { useTestDatabase } from './vitest/use-test-database.js'

declare module 'vitest' {
  /**
   * The values {@link createGlobalSetup} provides to every test file.
   *
   * @example
   * const serverUrl = inject('iddqueueServerUrl')
   */
  export interface ProvidedContext {
    /** The server URL of the run's PostgreSQL (a maintenance database). */
    iddqueueServerUrl: string
    /** The template database name, or `''` when there is none. */
    iddqueueTemplate: string
  }
}
