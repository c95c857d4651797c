import { InvalidOptionError } from '../errors.js'
import type { Executor, KyselyLike, PostgresJsLike } from './executor.js'
import { kyselyExecutor } from './kysely-executor.js'
import { postgresJsExecutor } from './postgres-js-executor.js'

/**
 * True for a Kysely instance or transaction.
 *
 * @example
 * isKysely(db) // true for a Kysely instance or transaction
 * isKysely(postgres(url)) // false
 */
export function isKysely(value: unknown): value is KyselyLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as KyselyLike).executeQuery === 'function' &&
    typeof (value as KyselyLike).transaction === 'function'
  )
}

/**
 * True for a postgres.js instance or transaction.
 *
 * @example
 * isPostgresJs(postgres(url)) // true, and for a transaction of sql.begin()
 * isPostgresJs(db) // false for a Kysely instance
 */
export function isPostgresJs(value: unknown): value is PostgresJsLike {
  return (
    typeof value === 'function' && typeof (value as unknown as PostgresJsLike).unsafe === 'function'
  )
}

/**
 * True for an {@link Executor}.
 *
 * @example
 * isExecutor(toExecutor(sql)) // true
 * isExecutor(sql) // false: wrap it with toExecutor()
 */
export function isExecutor(value: unknown): value is Executor {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Executor).query === 'function' &&
    typeof (value as Executor).transaction === 'function' &&
    typeof (value as Executor).inTransaction === 'boolean'
  )
}

/**
 * Wraps a postgres.js instance, a Kysely instance, or a transaction of
 * either, in an {@link Executor}. An executor passes through unchanged.
 *
 * @example
 * await db.transaction().execute(async (trx) => {
 *   await migrate(toExecutor(trx), { namespace: ns })
 * })
 */
export function toExecutor(value: unknown, what = 'database'): Executor {
  if (isExecutor(value)) return value
  if (isKysely(value)) return kyselyExecutor(value)
  if (isPostgresJs(value)) return postgresJsExecutor(value)
  throw new InvalidOptionError(
    `Invalid ${what}: expected a postgres.js instance, a Kysely instance or a transaction of either, got ${describe(value)}`,
  )
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'object') return value.constructor?.name ?? 'object'
  return typeof value
}
