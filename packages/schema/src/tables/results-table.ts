import type { ColumnType } from 'kysely'

/**
 * What a stored result holds.
 *
 * @example
 * const state: ResultState = 'done' // the table comes with @iddqueue/results (planned)
 */
export type ResultState = 'done' | 'failed' | 'cancelled'

/**
 * The `results` table (owned by `@iddqueue/results`): one result per message, with a TTL.
 *
 * @example
 * type ResultRow = Selectable<ResultsTable> // the table comes with @iddqueue/results (planned)
 */
export interface ResultsTable {
  message_id: string
  state: ResultState
  /** The handler's return value when `state` is `done`. */
  result: ColumnType<unknown, string | null, string | null>
  /** `{ type, message }` when `state` is `failed`. */
  error: ColumnType<Record<string, unknown> | null, string | null, string | null>
  expires_at: ColumnType<Date, Date | string, Date | string>
  created_at: ColumnType<Date, Date | string | undefined, never>
}
