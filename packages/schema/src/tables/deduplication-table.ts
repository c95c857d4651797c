import type { ColumnType, JSONColumnType } from 'kysely'

/**
 * The `deduplication` table: one live key per (queue, key) with the message
 * it published, so duplicates return the original.
 *
 * @example
 * const live: Selectable<DeduplicationTable>[] = await db
 *   .selectFrom('deduplication').selectAll().where('queue', '=', 'reports').execute()
 */
export interface DeduplicationTable {
  queue: string
  key: string
  message_id: string
  /** The original message as it was enqueued (id, actor, args, options, eta). */
  message: JSONColumnType<Record<string, unknown>>
  /** PostgreSQL time after which the key may publish again. */
  expires_at: ColumnType<Date, Date | string, Date | string>
  created_at: ColumnType<Date, Date | string | undefined, never>
}
