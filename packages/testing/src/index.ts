export type {
  CreatedTestDatabase,
  CreateTestDatabaseOptions,
} from './create-test-database.js'
export { createTestDatabase } from './create-test-database.js'
export type { DrainQueuesOptions, JoinableBroker } from './drain-queues.js'
export { drainQueues } from './drain-queues.js'
export { dropStaleTestDatabases } from './drop-stale-test-databases.js'
export type { PrepareTemplateDatabaseOptions } from './prepare-template-database.js'
export { prepareTemplateDatabase } from './prepare-template-database.js'
export { startTestDatabase } from './start-test-database.js'
export type { StartTestDatabaseOptions } from './start-test-database-options.js'
export type { RestartOptions, TestDatabase, TestDatabaseMode } from './test-database.js'
export type { TestDatabaseErrorOptions } from './test-database-error.js'
export { TestDatabaseError } from './test-database-error.js'
export type { WaitForOptions } from './wait-for.js'
export { waitFor } from './wait-for.js'
export { WaitTimeoutError } from './wait-timeout-error.js'
