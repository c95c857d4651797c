import type { ColumnType, Generated, JSONColumnType } from 'kysely'

/**
 * The `schedules` table (owned by `@iddqueue/scheduler`): a message template and when to send it.
 *
 * @example
 * type ScheduleRow = Selectable<SchedulesTable> // the table comes with @iddqueue/scheduler (planned)
 */
export interface SchedulesTable {
  name: string
  actor: string
  queue: string
  args: JSONColumnType<unknown[]>
  options: JSONColumnType<Record<string, unknown>>
  interval_ms: number | null
  cron: string | null
  timezone: string | null
  next_run_at: ColumnType<Date, Date | string, Date | string>
  last_run_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
  enabled: Generated<boolean>
  created_at: ColumnType<Date, Date | string | undefined, never>
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>
}
