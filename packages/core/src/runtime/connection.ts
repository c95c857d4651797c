import {
  type Executor,
  InvalidOptionError,
  isKysely,
  isPostgresJs,
  kyselyExecutor,
  postgresJsExecutor,
} from '@iddqueue/schema'
import postgres from 'postgres'
import { integerOption, labelledRefusal, refuseOption } from '../options/check-option.js'
import type { ListenFunction } from './listener.js'
import { DEFAULT_CONNECT_TIMEOUT_MS, reconnectDelaySeconds } from './reconnect-policy.js'
import { type TransactionSource, transactionSource } from './transaction-source.js'

/** @internal How the broker reaches PostgreSQL. */
export interface Connection {
  readonly executor: Executor
  /** LISTEN, or undefined in poll-only mode. */
  readonly listen: ListenFunction | undefined
  /** Transactions for transactional actors, each on its own connection. */
  readonly transactions: TransactionSource
  /** Closes the pools the broker owns (never the caller's). */
  close(): Promise<void>
}

/** @internal */
export interface ConnectionOptions {
  readonly url?: string
  readonly sql?: unknown
  readonly db?: unknown
  readonly listenUrl?: string
  readonly pollOnly?: boolean
  readonly poolSize?: number
  readonly prepare?: boolean
  readonly connectTimeoutMs?: number
}

type Sql = postgres.Sql

const POSTGRES_URL = 'a postgres:// or postgresql:// connection string'

// Bounded on purpose (see reconnect-policy.ts): a pool that waits seconds
// between attempts keeps every queued query waiting after the server is back.
function ownPool(
  url: string,
  max: number,
  prepare: boolean,
  connectTimeoutMs: number,
  option: 'url' | 'listenUrl',
): Sql {
  try {
    return postgresPool(url, max, prepare, connectTimeoutMs)
  } catch (error) {
    // postgres.js throws Node's TypeError, whose `input` is the whole URL,
    // password included: neither it nor the URL goes into this error.
    // The value is withheld from the error's fields for the same reason.
    throw refuseOption(
      `Invalid ${option}: not a parsable connection string (${(error as Error)?.message ?? 'unknown error'}); it is not shown here because it may hold a password`,
      { option, value: undefined, expected: 'a parsable connection string' },
    )
  }
}

function postgresPool(url: string, max: number, prepare: boolean, connectTimeoutMs: number): Sql {
  return postgres(url, {
    max,
    prepare,
    onnotice: () => {},
    connection: { application_name: 'iddqueue' },
    connect_timeout: connectTimeoutMs / 1_000,
    backoff: (retries: number) => reconnectDelaySeconds(retries),
  })
}

/**
 * postgres.js reads the server's array types again on every new connection
 * and leaves that query's promise unhandled: a connection terminated during
 * it (a restart, `pg_terminate_backend`) became an unhandled rejection,
 * which ends a Node process. The types never change, so once the first
 * statement succeeded (they are read before it runs) the pool stops
 * reading them.
 */
function fetchTypesOnce(sql: Sql, executor: Executor): Executor {
  let fetched = false
  const done = <T>(result: T): T => {
    if (!fetched) {
      fetched = true
      ;(sql.options as { fetch_types: boolean }).fetch_types = false
    }
    return result
  }
  return {
    inTransaction: executor.inTransaction,
    query: <Row>(text: string, params?: readonly unknown[]) =>
      executor.query<Row>(text, params).then(done),
    transaction: <T>(fn: (tx: Executor) => Promise<T>) => executor.transaction(fn).then(done),
  }
}

function listenOn(sql: Sql): ListenFunction {
  return (channel, onNotify, onListen) => sql.listen(channel, onNotify, onListen)
}

/**
 * @internal Opens (lazily: postgres.js connects on first use) the pool for a
 * URL, or wraps the caller's postgres.js or Kysely instance, which stays
 * theirs. LISTEN uses `listenUrl` when given (for PgBouncer in transaction
 * mode, point it at PostgreSQL directly), else the postgres.js instance, and
 * is off when `pollOnly` is set or only a Kysely instance was given.
 */
export function openConnection(options: ConnectionOptions): Connection {
  const given = [options.url, options.sql, options.db].filter((v) => v !== undefined).length
  if (given === 0 && 'url' in options) {
    // `createBroker({ url: process.env.DATABASE_URL })` with the variable unset.
    throw refuseOption(
      'Invalid broker options: url was given but is undefined; set DATABASE_URL (or whatever variable you pass as url) to a postgres:// connection string',
      { option: 'url', value: undefined, expected: POSTGRES_URL },
    )
  }
  if (given !== 1) {
    // A combination, not one option's value: no option/value/expected fits.
    throw new InvalidOptionError(
      `Invalid broker options: give exactly one of url, sql (a postgres.js instance) or db (a Kysely instance); got ${given}`,
    )
  }
  const poolSize = integerOption('poolSize', options.poolSize, 10, { min: 2 })
  const connectTimeoutMs = integerOption(
    'connectTimeoutMs',
    options.connectTimeoutMs,
    DEFAULT_CONNECT_TIMEOUT_MS,
    { min: 100 },
  )
  const owned: Sql[] = []
  let executor: Executor
  let transactions: TransactionSource
  let listenSql: Sql | undefined
  if (options.url !== undefined) {
    if (typeof options.url !== 'string' || !/^postgres(ql)?:\/\//.test(options.url)) {
      // A URL may hold a password: the error's value is left undefined, as its text is.
      throw labelledRefusal('url', undefined, POSTGRES_URL)
    }
    const prepare = options.prepare ?? true
    const sql = ownPool(options.url, poolSize, prepare, connectTimeoutMs, 'url')
    owned.push(sql)
    executor = fetchTypesOnce(sql, postgresJsExecutor(sql, { prepare }))
    transactions = transactionSource(sql, { prepare, poolSize })
    listenSql = sql
  } else if (options.sql !== undefined) {
    if (!isPostgresJs(options.sql)) {
      throw labelledRefusal(
        'sql',
        options.sql,
        'a postgres.js instance (the result of postgres(url))',
      )
    }
    executor = postgresJsExecutor(options.sql)
    transactions = transactionSource(options.sql)
    listenSql = options.sql as unknown as Sql
  } else {
    if (!isKysely(options.db)) throw labelledRefusal('db', options.db, 'a Kysely instance')
    executor = kyselyExecutor(options.db)
    transactions = transactionSource(options.db)
  }
  if (options.listenUrl !== undefined) {
    listenSql = ownPool(options.listenUrl, 1, true, connectTimeoutMs, 'listenUrl')
    owned.push(listenSql)
  }
  return {
    executor,
    transactions,
    listen: options.pollOnly || !listenSql ? undefined : listenOn(listenSql),
    async close() {
      await Promise.all(owned.map((sql) => sql.end({ timeout: 5 })))
    },
  }
}
