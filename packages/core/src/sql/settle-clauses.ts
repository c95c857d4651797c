import type { Message } from '../message/message.js'

/**
 * Clauses a plugin adds to the settle statement (decision 0016), so that
 * what it must change or signal with a message's outcome (the coordination
 * plugin wakes the workers waiting for a concurrency place) is done by the
 * same statement: one round trip, no transaction of its own. A plugin returns them from
 * `IddqueuePlugin.settleClauses` for the broker's namespace.
 *
 * The settled rows are the CTE `settled (id, state, queue, options)`: only
 * the messages this worker still held, with their new state.
 *
 * @example
 * const clauses: SettleClauses = {
 *   concerns: (message) => message.options.audit === true,
 *   ctes: `audited as (insert into audit (id, state) select id, state from settled)`,
 * }
 */
export interface SettleClauses {
  /**
   * Whether a message's settle needs the clauses: a batch with none of
   * them is written with core's statements alone.
   */
  readonly concerns: (message: Message) => boolean
  /**
   * Common table expressions after `settled`, written as `name as (...)`,
   * comma-separated, named after the plugin (several plugins' CTEs share one
   * statement). They may modify tables (the settle's own transaction).
   * Optional: a plugin may need only `effect`.
   */
  readonly ctes?: string
  /**
   * An SQL expression evaluated once after the CTEs, for the CTEs that only
   * read or notify: PostgreSQL runs such a CTE only when something reads it
   * (for example `(select count(*) from woken)`).
   */
  readonly effect?: string
}
