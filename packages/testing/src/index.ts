export type {
  NamespaceNotificationCollector,
  NotificationCollector,
  NotificationPurpose,
} from './collect-notifications.js'
export {
  collectNamespaceNotifications,
  collectNotifications,
  NOTIFICATION_PURPOSES,
} from './collect-notifications.js'
export type { ExportsDifference } from './compare-package-exports.js'
export { comparePackageExports } from './compare-package-exports.js'
export type {
  CreatedTestDatabase,
  CreateTestDatabaseOptions,
} from './create-test-database.js'
export { createTestDatabase } from './create-test-database.js'
export type { DrainQueuesOptions, JoinableBroker } from './drain-queues.js'
export { drainQueues } from './drain-queues.js'
export type { DrainWithWorkerOptions, WorkingBroker } from './drain-with-worker.js'
export { drainWithWorker } from './drain-with-worker.js'
export { dropStaleTestDatabases } from './drop-stale-test-databases.js'
export type { EmbeddedPostgresVersion } from './embedded/postgres-version.js'
export type { DevDatabase, StartDevDatabaseOptions } from './embedded/start-dev-database.js'
export { startDevDatabase } from './embedded/start-dev-database.js'
export type { MessageStatesOptions } from './message-states.js'
export { messageStates, uniqueQueue } from './message-states.js'
export type { PgBouncer, StartPgBouncerOptions } from './pgbouncer/start-pgbouncer.js'
export { findPgBouncer, startPgBouncer } from './pgbouncer/start-pgbouncer.js'
export type { PrepareTemplateDatabaseOptions } from './prepare-template-database.js'
export { prepareTemplateDatabase } from './prepare-template-database.js'
export { publishedInternals } from './published-internals.js'
export { startTestDatabase } from './start-test-database.js'
export type { StartTestDatabaseOptions } from './start-test-database-options.js'
export type { RestartOptions, TestDatabase, TestDatabaseMode } from './test-database.js'
export type { TestDatabaseErrorOptions } from './test-database-error.js'
export { TestDatabaseError } from './test-database-error.js'
export type { WaitForOptions } from './wait-for.js'
export { waitFor } from './wait-for.js'
export { WaitTimeoutError } from './wait-timeout-error.js'
