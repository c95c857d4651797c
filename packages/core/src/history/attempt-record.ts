import type { AttemptOutcome } from '@iddqueue/schema'
import type { IddqueuePlugin } from '../plugin/iddqueue-plugin.js'
import type { Middleware } from '../plugin/middleware-interface.js'

/**
 * How an attempt ended; `incomplete` while it runs, or when its worker died or gave up on it.
 *
 * @example
 * const { items } = await history.listAttempts(message.id)
 * const unfinished = items.filter((attempt) => attempt.status === ('incomplete' satisfies AttemptStatus))
 */
export type AttemptStatus = AttemptOutcome | 'incomplete'

/**
 * One execution of a message's handler. Never holds arguments or results.
 *
 * @example
 * const { items } = await history.listAttempts(message.id)
 * for (const attempt of items) {
 *   console.log(attempt.startedAt, attempt.status, attempt.durationMs, attempt.errorType)
 * }
 */
export interface AttemptRecord {
  /** The attempt's own id (each retry has a new one). */
  readonly id: string
  readonly messageId: string
  readonly actor: string
  readonly queue: string
  /** The worker that ran it. */
  readonly workerId: string | null
  /** When the handler was about to start (PostgreSQL's clock). */
  readonly startedAt: Date
  /** When the outcome was recorded (PostgreSQL's clock); null while incomplete. */
  readonly finishedAt: Date | null
  readonly status: AttemptStatus
  /** The handler's run time, measured by the worker; null while incomplete. */
  readonly durationMs: number | null
  /** The error's class name, for a failed attempt. */
  readonly errorType: string | null
  /** The error's text (at most 2,000 characters), for a failed attempt. It may hold application data. */
  readonly errorMessage: string | null
}

/**
 * Options of `listAttempts`.
 *
 * @example
 * const page = await history.listAttempts(message.id, { limit: 100, after: cursor })
 */
export interface ListAttemptsOptions {
  /** Page size, from 1 to 1,000. Default 50. */
  readonly limit?: number
  /** The cursor: attempts with ids after this one (the previous page's `nextAfter`). */
  readonly after?: string
}

/**
 * A page of `listAttempts`.
 *
 * @example
 * let after: string | undefined
 * do {
 *   const page: ListAttemptsResult = await history.listAttempts(message.id, { after })
 *   console.log(page.items.length)
 *   after = page.nextAfter ?? undefined
 * } while (after)
 */
export interface ListAttemptsResult {
  readonly items: AttemptRecord[]
  /** The cursor for the next page; null on the last page. */
  readonly nextAfter: string | null
}

/**
 * Options of `purgeAttempts`.
 *
 * @example
 * const deleted = await history.purgeAttempts({ olderThanMs: 7 * 24 * 3600 * 1000 })
 */
export interface PurgeAttemptsOptions {
  /** Delete attempts that started longer ago than this, incomplete ones included. */
  readonly olderThanMs: number
}

/**
 * The attempt history plugin: one record per execution of a handler, with its
 * timings, outcome and error. Made by {@link attemptHistory}.
 *
 * @example
 * const history: AttemptHistoryPlugin = attemptHistory()
 * const broker = createBroker({ url: process.env.DATABASE_URL, plugins: [history] })
 */
export interface AttemptHistoryPlugin extends IddqueuePlugin {
  readonly middleware: Middleware
  /**
   * A message's attempts, in UUID (cursor) order: attempts made by one worker
   * process follow their start order, but compare `startedAt` to order
   * attempts made by different workers.
   *
   * @example
   * let after: string | undefined
   * do {
   *   const page = await history.listAttempts(message.id, { after })
   *   for (const attempt of page.items) console.log(attempt.status, attempt.durationMs)
   *   after = page.nextAfter ?? undefined
   * } while (after)
   */
  listAttempts(messageId: string, options?: ListAttemptsOptions): Promise<ListAttemptsResult>
  /**
   * Deletes attempts by start time, incomplete ones included, in batches of
   * 5,000, and returns how many. Retention is explicit: nothing purges
   * attempts on its own (`broker.purge()` leaves them).
   *
   * @example
   * const deleted = await history.purgeAttempts({ olderThanMs: 30 * 24 * 3600 * 1000 })
   */
  purgeAttempts(options: PurgeAttemptsOptions): Promise<number>
}
