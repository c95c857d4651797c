import type { Executor, PostgresJsLike } from './executor.js'

/** What a finished postgres.js query still holds: its arguments and their serialized form. */
interface QueryInternals {
  args?: unknown | undefined
  parameters?: unknown | undefined
}

/**
 * Lets go of what a finished postgres.js query holds. Its query object (a
 * Promise subclass) survives young-generation GCs until the next full GC,
 * and so does everything it references: the row array it resolved to (the
 * caller gets the rows in a plain array instead), the arguments and their
 * serialized text (for an acknowledgement, 1,000 message ids). Measured on a
 * worker draining 50,000 messages: ~40 MB of rows and ~5 MB of arguments were
 * promoted that way, growing the heap. postgres.js reads neither once the
 * query has settled.
 */
function forget(query: QueryInternals): void {
  if ('args' in query) query.args = undefined
  if ('parameters' in query) query.parameters = undefined
}

/**
 * An {@link Executor} over a postgres.js instance or one of its transactions.
 * Statements with parameters are prepared once per connection and reused.
 *
 * @example
 * const executor = postgresJsExecutor(postgres(url))
 */
export function postgresJsExecutor(
  instance: object,
  options: { readonly prepare?: boolean } = {},
): Executor {
  const sql = instance as PostgresJsLike
  const prepare = options.prepare ?? true
  const inTransaction = typeof sql.savepoint === 'function'
  return {
    inTransaction,
    async query<Row>(text: string, params: readonly unknown[] = []): Promise<Row[]> {
      // Without parameters postgres.js uses the simple protocol, which also
      // allows several statements in one text (migrations rely on that).
      const query = sql.unsafe(text, params as unknown[], {
        prepare: prepare && params.length > 0,
      })
      const rows = (await query) as Row[]
      forget(query as QueryInternals)
      return rows.splice(0)
    },
    async transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
      const open = inTransaction ? sql.savepoint : sql.begin
      if (typeof open !== 'function') throw new TypeError('postgres.js instance has no begin()')
      return (await open.call(sql, (tx) => fn(postgresJsExecutor(tx, options)))) as T
    },
  }
}
