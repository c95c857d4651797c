import type { Overlap, ScheduleDefinition } from './definition/schedule-definition.js'
import type { ScheduleRow } from './sql/statements.js'
import type { CatchUp } from './timing/plan-tick.js'

/**
 * A stored schedule, as `list()` and `get()` return it. Times are Dates
 * (PostgreSQL's clock); `nextRunAt` is null once the schedule has ended.
 *
 * @example
 * for (const s of await schedules.list()) console.log(s.name, s.enabled, s.nextRunAt?.toISOString())
 */
export interface ScheduleInfo {
  readonly name: string
  readonly actor: string
  readonly queue: string
  readonly args: readonly unknown[]
  readonly priority: number
  readonly everyMs: number | null
  readonly cron: string | null
  readonly timezone: string | null
  readonly startAt: Date | null
  readonly endAt: Date | null
  readonly enabled: boolean
  readonly catchUp: CatchUp
  readonly overlap: Overlap
  readonly nextRunAt: Date | null
  readonly lastRunAt: Date | null
  /** The last occurrence's message. */
  readonly lastMessageId: string | null
  /** `'code'` when `define()` wrote it (and `prune` may delete it), `'api'` for `create()`. */
  readonly source: 'code' | 'api'
  readonly createdAt: Date
  readonly updatedAt: Date
}

const date = (ms: number | null) => (ms === null ? null : new Date(ms))

/** @internal */
export function scheduleInfo(row: ScheduleRow): ScheduleInfo {
  return {
    name: row.name,
    actor: row.actor,
    queue: row.queue,
    args: row.args,
    priority: row.priority,
    everyMs: row.every_ms,
    cron: row.cron,
    timezone: row.timezone,
    startAt: date(row.start_at_ms),
    endAt: date(row.end_at_ms),
    enabled: row.enabled,
    catchUp: row.catch_up,
    overlap: row.overlap,
    nextRunAt: date(row.next_run_ms),
    lastRunAt: date(row.last_run_ms),
    lastMessageId: row.last_message_id,
    source: row.source,
    createdAt: new Date(row.created_ms),
    updatedAt: new Date(row.updated_ms),
  }
}

/** @internal The definition a stored row was made from (for `update()`). */
export function definitionOf(row: ScheduleRow): ScheduleDefinition {
  return {
    name: row.name,
    actor: row.actor,
    queue: row.queue,
    args: row.args,
    priority: row.priority,
    ...(row.every_ms !== null ? { everyMs: row.every_ms } : {}),
    ...(row.cron !== null ? { cron: row.cron, timezone: row.timezone ?? 'UTC' } : {}),
    ...(row.start_at_ms !== null ? { startAt: row.start_at_ms } : {}),
    ...(row.end_at_ms !== null ? { endAt: row.end_at_ms } : {}),
    enabled: row.enabled,
    catchUp: row.catch_up,
    overlap: row.overlap,
  }
}
