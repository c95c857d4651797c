import { CompiledQuery } from 'kysely'
import type { Executor, KyselyLike } from './executor.js'

let savepoints = 0

/**
 * An {@link Executor} over a Kysely instance or one of its transactions.
 * Works with any Kysely PostgreSQL dialect (kysely-postgres-js, pg, ...).
 *
 * @example
 * const executor = kyselyExecutor(db)
 * await db.transaction().execute((trx) => kyselyExecutor(trx).query('select 1'))
 */
export function kyselyExecutor(db: KyselyLike): Executor {
  const inTransaction = db.isTransaction
  const executor: Executor = {
    inTransaction,
    async query<Row>(text: string, params: readonly unknown[] = []): Promise<Row[]> {
      const result = await db.executeQuery(CompiledQuery.raw(text, [...params]))
      return result.rows as Row[]
    },
    async transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
      if (!inTransaction) return db.transaction().execute((trx) => fn(kyselyExecutor(trx)))
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
