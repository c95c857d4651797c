import type { ColumnType, Generated, JSONColumnType } from 'kysely'

/**
 * The `schedules` table (owned by `@iddqueue/scheduler`): a message template,
 * when to send it, and where the schedule stands.
 *
 * @example
 * const due: Selectable<SchedulesTable>[] = await db
 *   .selectFrom('schedules').selectAll().where('enabled', '=', true).orderBy('next_run_at').execute()
 */
export interface SchedulesTable {
  name: string
  actor: string
  queue: string
  args: JSONColumnType<unknown[]>
  priority: number
  /** A fixed interval in ms, or null for a cron schedule. */
  every_ms: ColumnType<string | null, number | string | null, number | string | null>
  cron: string | null
  /** The IANA time zone of a cron schedule. */
  timezone: string | null
  start_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
  end_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
  /** The interval grid's origin: `start_at`, or when the schedule was created. */
  anchor_at: ColumnType<Date, Date | string, Date | string>
  /** `"latest"` or `{ "max": n, "withinMs": ms }`. */
  catch_up: ColumnType<'latest' | { max: number; withinMs?: number }, string, string>
  overlap: 'allow' | 'skip'
  enabled: Generated<boolean>
  /** The next occurrence to publish; null once the schedule has ended. */
  next_run_at: ColumnType<Date | null, Date | string | null, Date | string | null>
  last_run_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
  last_message_id: string | null
  /** `code` when `define()` wrote it, `api` for `create()`. */
  source: 'code' | 'api'
  definition_hash: string
  created_at: ColumnType<Date, Date | string | undefined, never>
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>
}
