import type { ColumnType } from 'kysely'
import type { FailureRecord } from './messages-table.js'

/**
 * What a stored result holds: the handler's value (`success`), the failure
 * that rejected the message (`failure`), or its cancellation (`cancelled`).
 *
 * @example
 * const status: ResultStatus = 'success'
 */
export type ResultStatus = 'success' | 'failure' | 'cancelled'

/**
 * The `results` table (created by the `@iddqueue/results` plugin's
 * migration): at most one result per message, until `expires_at`.
 *
 * @example
 * type ResultRow = Selectable<ResultsTable>
 */
export interface ResultsTable {
  message_id: string
  status: ResultStatus
  /** The handler's return value as JSON when `status` is `success`; SQL null for `undefined`. */
  value: ColumnType<unknown, string | null, string | null>
  /** `{ type, message, at, attempt }` when `status` is `failure` or `cancelled`. */
  failure: ColumnType<
    Omit<FailureRecord, 'stack'> | null,
    string | null | undefined,
    string | null | undefined
  >
  expires_at: ColumnType<Date, Date | string, Date | string>
  stored_at: ColumnType<Date, Date | string | undefined, Date | string | undefined>
}
