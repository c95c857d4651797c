import type { Executor, KyselyLike } from './executor.js'

let savepoints = 0

/**
 * The shape of Kysely's `CompiledQuery.raw(text, params)`, built here so
 * that iddqueue does not load Kysely unless the caller already uses it.
 */
function rawQuery(sql: string, parameters: readonly unknown[]) {
  return {
    sql,
    parameters,
    query: { kind: 'RawNode', sqlFragments: [sql], parameters: [] },
    queryId: { queryId: 'iddqueue' },
  }
}

/**
 * An {@link Executor} over a Kysely instance or one of its transactions.
 * Works with any Kysely PostgreSQL dialect (kysely-postgres-js, pg, ...).
 * The instance's plugins (such as CamelCasePlugin) are bypassed, so they
 * never rewrite iddqueue's own queries and rows.
 *
 * @example
 * const executor = kyselyExecutor(db)
 * await db.transaction().execute((trx) => kyselyExecutor(trx).query('select 1'))
 */
export function kyselyExecutor(instance: object): Executor {
  const db = instance as KyselyLike
  const plain = db.withoutPlugins ? db.withoutPlugins() : db
  const inTransaction = db.isTransaction
  const executor: Executor = {
    inTransaction,
    async query<Row>(text: string, params: readonly unknown[] = []): Promise<Row[]> {
      const result = await plain.executeQuery(rawQuery(text, [...params]))
      return result.rows as Row[]
    },
    async transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
      if (!inTransaction) return plain.transaction().execute((trx) => fn(kyselyExecutor(trx)))
      const name = `iddqueue_sp_${++savepoints}`
      await executor.query(`savepoint ${name}`)
      try {
        const value = await fn(executor)
        await executor.query(`release savepoint ${name}`)
        return value
      } catch (error) {
        await executor.query(`rollback to savepoint ${name}`)
        throw error
      }
    },
  }
  return executor
}
