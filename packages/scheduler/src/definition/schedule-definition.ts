import type { CatchUp } from '../timing/plan-tick.js'

/**
 * What `overlap: 'skip'` checks: with `'skip'`, an occurrence whose previous
 * occurrence's message is still queued or running publishes nothing (the
 * schedule still advances). Default `'allow'`.
 *
 * @example
 * const overlap: Overlap = 'skip'
 */
export type Overlap = 'allow' | 'skip'

/**
 * A schedule: a message template (actor, queue, arguments, priority) and
 * when to send it, either every `everyMs` or on a `cron` expression in a
 * `timezone`.
 *
 * @example
 * const nightly: ScheduleDefinition = {
 *   name: 'nightly-report',
 *   actor: 'generate_report',
 *   queue: 'reports',
 *   args: [{ account: 42 }],
 *   cron: '0 3 * * *',
 *   timezone: 'Europe/Paris',
 *   overlap: 'skip',
 * }
 */
export interface ScheduleDefinition {
  /** Unique in the namespace: 1 to 128 characters, no control characters. */
  readonly name: string
  /** The actor to send to, by name: the scheduler never imports actor code. */
  readonly actor: string
  /** Default: the actor's queue when this process declares it, else `'default'`. */
  readonly queue?: string
  /** The message's arguments, as JSON. Default `[]`. */
  readonly args?: readonly unknown[]
  /** Default: the actor's priority when this process declares it, else 0. */
  readonly priority?: number
  /** A fixed interval in ms (a positive integer). Give `everyMs` or `cron`. */
  readonly everyMs?: number
  /** A cron expression (5 fields, or 6 with seconds), parsed by croner. */
  readonly cron?: string
  /** The IANA time zone the cron expression is read in. Default `'UTC'`. Cron only. */
  readonly timezone?: string
  /**
   * The first occurrence (inclusive): for an interval, the grid's origin
   * (default: when the schedule is created, so it is due at once); for
   * cron, no occurrence before it.
   */
  readonly startAt?: Date | string | number
  /** No occurrence at or after it. */
  readonly endAt?: Date | string | number
  /** Default `true`. */
  readonly enabled?: boolean
  /** Default `'latest'`: missed occurrences coalesce into one message. */
  readonly catchUp?: CatchUp
  /** Default `'allow'`. */
  readonly overlap?: Overlap
}
