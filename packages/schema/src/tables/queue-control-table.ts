import type { ColumnType, Generated } from 'kysely'

/**
 * The `queue_control` table: persistent per-queue pause state.
 *
 * @example
 * const paused: Selectable<QueueControlTable>[] = await db
 *   .selectFrom('queue_control').selectAll().where('paused', '=', true).execute()
 */
export interface QueueControlTable {
  queue: string
  paused: Generated<boolean>
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>
}
