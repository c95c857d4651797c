export { describeValue } from './describe-value.js'
export {
  IddqueueError,
  type IddqueueErrorOptions,
  InvalidIdentifierError,
  InvalidOptionError,
  type InvalidOptionErrorOptions,
  MigrationError,
  UnsupportedPostgresError,
} from './errors.js'
export type { Executor } from './executor/executor.js'
export { kyselyExecutor } from './executor/kysely-executor.js'
export { postgresJsExecutor } from './executor/postgres-js-executor.js'
export { isExecutor, isKysely, isPostgresJs, toExecutor } from './executor/to-executor.js'
export {
  type GenerateGrantsOptions,
  type GrantMode,
  generateGrantsSql,
} from './grants/generate-grants-sql.js'
export { type CheckSchemaOptions, checkSchema, type SchemaCheck } from './migration/check-schema.js'
export { coreMigrations } from './migration/core-migrations.js'
export {
  describeSchema,
  type SchemaDescription,
  type TableDescription,
} from './migration/describe-schema.js'
export {
  type GenerateSqlOptions,
  generateInitSql,
  generateUpgradeSql,
} from './migration/generate-sql.js'
export {
  type AppliedMigration,
  assertPostgresVersion,
  MIN_POSTGRES_VERSION,
} from './migration/ledger.js'
export { type MigrateOptions, type MigrateResult, migrate } from './migration/migrate.js'
export type { Migration, MigrationSet } from './migration/migration.js'
export { lockKeyOf } from './namespace/hash.js'
export { MAX_PREFIX_BYTES, MAX_SCHEMA_BYTES, quoteIdentifier } from './namespace/identifier.js'
export {
  isNamespace,
  MAX_CHANNEL_BYTES,
  type Namespace,
  type NamespaceOptions,
  namespace,
  toNamespace,
} from './namespace/namespace.js'
export type { AttemptOutcome, AttemptsTable } from './tables/attempts-table.js'
export type { CoordinationTable } from './tables/coordination-table.js'
export type { DeduplicationTable } from './tables/deduplication-table.js'
export {
  type IddqueueDatabase,
  TABLE_NAMES,
  type TableName,
} from './tables/iddqueue-database.js'
export {
  type FailureRecord,
  MESSAGE_STATES,
  type MessageState,
  type MessagesTable,
} from './tables/messages-table.js'
export type { MigrationsTable } from './tables/migrations-table.js'
export type { QueueControlTable } from './tables/queue-control-table.js'
export type { ResultStatus, ResultsTable } from './tables/results-table.js'
export type { SchedulesTable } from './tables/schedules-table.js'
export type { WorkersTable } from './tables/workers-table.js'
