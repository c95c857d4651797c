import type { AttemptsTable } from './attempts-table.js'
import type { CoordinationTable } from './coordination-table.js'
import type { DeduplicationTable } from './deduplication-table.js'
import type { MessagesTable } from './messages-table.js'
import type { MigrationsTable } from './migrations-table.js'
import type { QueueControlTable } from './queue-control-table.js'
import type { ResultsTable } from './results-table.js'
import type { SchedulesTable } from './schedules-table.js'
import type { WorkersTable } from './workers-table.js'

/**
 * Every iddqueue table by its logical name, for `Kysely<IddqueueDatabase>`.
 * The namespace plugin maps these names to the real schema and prefix.
 *
 * @example
 * const db = new Kysely<IddqueueDatabase>({ dialect }).withPlugin(new NamespacePlugin(ns))
 * const rows = await db.selectFrom('messages').select(['id', 'state']).execute()
 */
export interface IddqueueDatabase {
  messages: MessagesTable
  deduplication: DeduplicationTable
  queue_control: QueueControlTable
  workers: WorkersTable
  attempts: AttemptsTable
  results: ResultsTable
  coordination: CoordinationTable
  schedules: SchedulesTable
  migrations: MigrationsTable
}

/**
 * The logical name of an iddqueue table.
 *
 * @example
 * const table: TableName = 'messages'
 * namespace({ schema: 'jobs' }).table(table) // '"jobs"."messages"'
 */
export type TableName = keyof IddqueueDatabase

/**
 * Every logical table name.
 *
 * @example
 * for (const name of TABLE_NAMES) console.log(namespace({ prefix: 'app_' }).tableName(name))
 */
export const TABLE_NAMES: readonly TableName[] = Object.freeze([
  'messages',
  'deduplication',
  'queue_control',
  'workers',
  'attempts',
  'results',
  'coordination',
  'schedules',
  'migrations',
])
