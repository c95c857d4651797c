import type { Namespace, NamespaceOptions } from '@iddqueue/schema'
import type { IddqueuePlugin } from '../plugin/iddqueue-plugin.js'
import type { Middleware } from '../plugin/middleware-interface.js'
import type { Logger } from '../runtime/logger.js'

/**
 * How to reach PostgreSQL and what to load. Give exactly one of `url`, `sql`
 * or `db`.
 *
 * @example
 * const broker = createBroker({
 *   url: process.env.DATABASE_URL,
 *   namespace: { schema: 'jobs' },
 *   plugins: [results()],
 * })
 */
export interface BrokerOptions {
  /** A connection string: the broker opens (lazily) and owns a pool, closed by `close()`. */
  readonly url?: string
  /** The caller's postgres.js instance; it stays the caller's to close. */
  readonly sql?: unknown
  /** The caller's Kysely instance (any PostgreSQL dialect); it stays the caller's. LISTEN then needs `listenUrl`. */
  readonly db?: unknown
  /**
   * A direct PostgreSQL URL for the LISTEN connection, when the main one goes
   * through PgBouncer in transaction mode (which cannot LISTEN).
   */
  readonly listenUrl?: string
  /** Never LISTEN: workers and waiters poll. For poolers without a direct URL. Default false. */
  readonly pollOnly?: boolean
  /**
   * Use prepared statements on the pool opened for `url` (postgres.js
   * `prepare`). Turn off behind PgBouncer in transaction mode older than 1.21
   * (or without `max_prepared_statements`). Default true.
   */
  readonly prepare?: boolean
  /** Size of the pool opened for `url`. Default 10. */
  readonly poolSize?: number
  /** Where the tables live. Default: schema `iddqueue`, no prefix. */
  readonly namespace?: Namespace | NamespaceOptions
  /** Feature packages, outermost middleware first. */
  readonly plugins?: readonly IddqueuePlugin[]
  /** Extra middleware, run inside core's and the plugins'. */
  readonly middleware?: readonly Middleware[]
  /** Default `consoleLogger('warn')`. */
  readonly logger?: Logger
  /** Largest encoded arguments plus options of one message. Default 1 MiB. */
  readonly maxPayloadBytes?: number
  /**
   * Makes `currentMessage()` work inside handlers (AsyncLocalStorage).
   * Default false: on Node 20 it enables promise hooks for the whole process,
   * which costs about 10% of a worker's throughput, and handlers already get
   * `ctx.message`. Turn it on for code deep in a handler's call tree (a
   * logger) that needs the message without it being passed down.
   */
  readonly currentMessage?: boolean
  /**
   * Delete a message when it succeeds instead of keeping it `done` until the
   * retention purge. Default false. Rejected and cancelled messages are kept
   * either way (to inspect and retry). Deleting costs PostgreSQL less than
   * keeping: drains run about 1.5× faster here (docs/performance.md). What
   * you give up: a succeeded message can no longer be looked up (its
   * cancellation status is `missing`), and counts of done messages are
   * gone. Give every broker of a namespace the same setting.
   *
   * @example
   * const broker = createBroker({ url: process.env.DATABASE_URL, deleteOnSuccess: true })
   */
  readonly deleteOnSuccess?: boolean
}
