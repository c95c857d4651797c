import type { ColumnType } from 'kysely'

/**
 * The `workers` table: live worker processes and their heartbeats.
 *
 * @example
 * const live: Selectable<WorkersTable>[] = await db
 *   .selectFrom('workers').selectAll().orderBy('heartbeat_at', 'desc').execute()
 */
export interface WorkersTable {
  id: string
  host: string
  pid: number
  queues: string[]
  concurrency: number
  started_at: ColumnType<Date, Date | string | undefined, never>
  heartbeat_at: ColumnType<Date, Date | string | undefined, Date | string>
}
