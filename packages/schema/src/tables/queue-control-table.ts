import type { ColumnType, Generated } from 'kysely'

/** The `queue_control` table: persistent per-queue pause state. */
export interface QueueControlTable {
  queue: string
  paused: Generated<boolean>
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>
}
