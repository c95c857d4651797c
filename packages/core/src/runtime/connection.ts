import {
  type Executor,
  InvalidOptionError,
  isKysely,
  isPostgresJs,
  kyselyExecutor,
  postgresJsExecutor,
} from '@iddqueue/schema'
import postgres from 'postgres'
import type { ListenFunction } from './listener.js'

/** @internal How the broker reaches PostgreSQL. */
export interface Connection {
  readonly executor: Executor
  /** LISTEN, or undefined in poll-only mode. */
  readonly listen: ListenFunction | undefined
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
}

type Sql = postgres.Sql

function ownPool(url: string, max: number, prepare: boolean): Sql {
  return postgres(url, {
    max,
    prepare,
    onnotice: () => {},
    connection: { application_name: 'iddqueue' },
  })
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
    throw new InvalidOptionError(
      'Invalid broker options: url was given but is undefined; set DATABASE_URL (or whatever variable you pass as url) to a postgres:// connection string',
    )
  }
  if (given !== 1) {
    throw new InvalidOptionError(
      `Invalid broker options: give exactly one of url, sql (a postgres.js instance) or db (a Kysely instance); got ${given}`,
    )
  }
  const poolSize = options.poolSize ?? 10
  if (!Number.isInteger(poolSize) || poolSize < 2) {
    throw new InvalidOptionError(
      `Invalid poolSize ${options.poolSize}: expected an integer of at least 2`,
    )
  }
  const owned: Sql[] = []
  let executor: Executor
  let listenSql: Sql | undefined
  if (options.url !== undefined) {
    if (typeof options.url !== 'string' || !/^postgres(ql)?:\/\//.test(options.url)) {
      throw new InvalidOptionError(
        'Invalid url: expected a postgres:// or postgresql:// connection string',
      )
    }
    const prepare = options.prepare ?? true
    const sql = ownPool(options.url, poolSize, prepare)
    owned.push(sql)
    executor = postgresJsExecutor(sql, { prepare })
    listenSql = sql
  } else if (options.sql !== undefined) {
    if (!isPostgresJs(options.sql)) {
      throw new InvalidOptionError(
        'Invalid sql: expected a postgres.js instance (the result of postgres(url))',
      )
    }
    executor = postgresJsExecutor(options.sql)
    listenSql = options.sql as unknown as Sql
  } else {
    if (!isKysely(options.db))
      throw new InvalidOptionError('Invalid db: expected a Kysely instance')
    executor = kyselyExecutor(options.db)
  }
  if (options.listenUrl !== undefined) {
    listenSql = ownPool(options.listenUrl, 1, true)
    owned.push(listenSql)
  }
  return {
    executor,
    listen: options.pollOnly || !listenSql ? undefined : listenOn(listenSql),
    async close() {
      await Promise.all(owned.map((sql) => sql.end({ timeout: 5 })))
    },
  }
}
