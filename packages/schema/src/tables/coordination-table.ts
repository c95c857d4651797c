import type { ColumnType, JSONColumnType } from 'kysely'

/**
 * The `coordination` table (owned by `@iddqueue/coordination`): limiter slots, buckets, windows and barriers.
 *
 * @example
 * type CoordinationRow = Selectable<CoordinationTable> // the table comes with @iddqueue/coordination (planned)
 */
export interface CoordinationTable {
  key: string
  kind: string
  value: JSONColumnType<Record<string, unknown>>
  expires_at: ColumnType<Date, Date | string, Date | string>
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>
}
