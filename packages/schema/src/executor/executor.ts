/**
 * Something that runs SQL text with parameters: iddqueue's own postgres.js
 * pool, the caller's postgres.js or Kysely instance, or a caller's
 * transaction on either. Every iddqueue query goes through one.
 *
 * @example
 * const executor = toExecutor(sql) // a postgres.js instance
 * const rows = await executor.query<{ n: number }>('select $1::int as n', [1])
 */
export interface Executor {
  /** Runs one statement; values are always parameters (`$1`, `$2`, ...). */
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<Row[]>
  /**
   * Runs `fn` atomically: in a new transaction on a pool, or in a savepoint
   * when this executor is already a transaction (so a caught error leaves the
   * caller's earlier writes intact). Never commits a caller's transaction.
   */
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>
  /** True when statements run inside a transaction the caller controls or one `transaction()` opened. */
  readonly inTransaction: boolean
}

/**
 * The subset of a postgres.js instance (or its transaction) that iddqueue
 * uses: the parameter type of {@link postgresJsExecutor}, and what
 * `isPostgresJs` narrows to.
 */
export interface PostgresJsLike {
  unsafe(
    query: string,
    parameters?: unknown[],
    options?: { prepare?: boolean },
  ): PromiseLike<unknown> & object
  begin?: (fn: (tx: PostgresJsLike) => unknown) => Promise<unknown>
  savepoint?: (fn: (tx: PostgresJsLike) => unknown) => Promise<unknown>
  listen?: unknown
  end?: (options?: { timeout?: number }) => Promise<void>
}

/**
 * The subset of a Kysely instance (or its transaction) that iddqueue uses:
 * the parameter type of {@link kyselyExecutor}, and what `isKysely` narrows
 * to.
 */
export interface KyselyLike {
  executeQuery(query: {
    sql: string
    parameters: readonly unknown[]
    query: unknown
    queryId: unknown
  }): Promise<{ rows: unknown[] }>
  transaction(): { execute<T>(fn: (trx: KyselyLike) => Promise<T>): Promise<T> }
  readonly isTransaction: boolean
  withoutPlugins?(): KyselyLike
}
