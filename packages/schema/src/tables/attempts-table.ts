import type { ColumnType } from 'kysely'

/**
 * How an attempt ended; `null` while it runs or when its worker died.
 *
 * @example
 * const failed = await db.selectFrom('attempts').select('id').where('outcome', '=', 'failed' satisfies AttemptOutcome).execute()
 */
export type AttemptOutcome = 'successful' | 'failed'

/**
 * The `attempts` table (opt-in history): one row per execution. Never holds
 * arguments or results.
 *
 * @example
 * const slowest: Selectable<AttemptsTable>[] = await db
 *   .selectFrom('attempts').selectAll().orderBy('duration_ms', 'desc').limit(10).execute()
 */
export interface AttemptsTable {
  id: string
  message_id: string
  actor: string
  queue: string
  worker_id: string | null
  started_at: ColumnType<Date, Date | string | undefined, Date | string>
  finished_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
  outcome: AttemptOutcome | null
  duration_ms: number | null
  error_type: string | null
  error_message: string | null
}
