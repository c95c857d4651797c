import {
  type Executor,
  isKysely,
  isPostgresJs,
  kyselyExecutor,
  postgresJsExecutor,
} from '@iddqueue/schema'

interface PostgresJsPool {
  begin?: (fn: (tx: object) => unknown) => Promise<unknown>
  savepoint?: unknown
}

interface KyselyInstance {
  readonly isTransaction: boolean
  transaction(): { execute<T>(fn: (trx: object) => Promise<T>): Promise<T> }
}

/**
 * Connections of the pool a worker keeps for its own statements (claims,
 * settles, heartbeats) while transactional handlers hold the others.
 */
export const RESERVED_CONNECTIONS = 2

/**
 * @internal Where transactional actors get their transactions: a dedicated
 * connection of the broker's pool for each, handed to the handler as the
 * driver's own transaction object (a postgres.js `TransactionSql`, or a
 * Kysely `Transaction` when the broker was given a Kysely instance).
 */
export interface TransactionSource {
  /** Why this broker cannot run transactional actors, or undefined when it can. */
  readonly unavailable: string | undefined
  /** Connections in the pool, when the broker knows it (not for a caller's Kysely instance). */
  readonly poolSize: number | undefined
  /** Opens a transaction on its own connection; commits when `fn` resolves, rolls back when it throws. */
  begin<T>(fn: (handle: unknown, executor: Executor) => Promise<T>): Promise<T>
}

function unavailable(reason: string): TransactionSource {
  return {
    unavailable: reason,
    poolSize: undefined,
    begin: () => Promise.reject(new TypeError(reason)),
  }
}

/** @internal The transaction source for the driver instance the broker runs on. */
export function transactionSource(
  instance: unknown,
  options: { readonly prepare?: boolean; readonly poolSize?: number } = {},
): TransactionSource {
  if (isPostgresJs(instance)) {
    const sql = instance as PostgresJsPool
    if (typeof sql.savepoint === 'function' || typeof sql.begin !== 'function') {
      return unavailable(
        'the broker was given a postgres.js transaction (or an instance without begin()), not a pool',
      )
    }
    const max = (instance as { options?: { max?: unknown } }).options?.max
    const poolSize = options.poolSize ?? (typeof max === 'number' ? max : undefined)
    const prepare = options.prepare ?? true
    return {
      unavailable: undefined,
      poolSize,
      begin: async <T>(fn: (handle: unknown, executor: Executor) => Promise<T>) =>
        (await sql.begin!((tx) => fn(tx, postgresJsExecutor(tx, { prepare })))) as T,
    }
  }
  if (isKysely(instance)) {
    const db = instance as unknown as KyselyInstance
    if (db.isTransaction) {
      return unavailable('the broker was given a Kysely transaction, not a Kysely instance')
    }
    return {
      unavailable: undefined,
      poolSize: undefined,
      begin: <T>(fn: (handle: unknown, executor: Executor) => Promise<T>) =>
        db.transaction().execute((trx) => fn(trx, kyselyExecutor(trx))),
    }
  }
  return unavailable('the broker has no postgres.js or Kysely instance to open transactions on')
}
