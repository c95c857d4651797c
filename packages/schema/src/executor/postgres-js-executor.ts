import type { Executor, PostgresJsLike } from './executor.js'

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
      const rows = (await sql.unsafe(text, params as unknown[], {
        prepare: prepare && params.length > 0,
      })) as Row[]
      // postgres.js resolves to a row array its query object keeps, and that
      // object (a Promise subclass) survives young-generation GCs until the
      // next full GC: every row it holds is copied, promoted and grows the
      // heap. A worker draining 50,000 messages promoted ~40 MB of rows that
      // way. Moving the rows to a plain array leaves the query an empty one.
      return rows.splice(0)
    },
    async transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
      const open = inTransaction ? sql.savepoint : sql.begin
      if (typeof open !== 'function') throw new TypeError('postgres.js instance has no begin()')
      return (await open.call(sql, (tx) => fn(postgresJsExecutor(tx, options)))) as T
    },
  }
}
