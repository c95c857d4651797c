export type { Overlap, ScheduleDefinition } from './definition/schedule-definition.js'
export { ScheduleExistsError, ScheduleNotFoundError } from './errors.js'
export { migrationSet, schedulerMigrations } from './migrations.js'
export { type ScheduledOccurrence, scheduledOccurrence } from './occurrence.js'
export { DEDUP_PREFIX, DEDUP_TTL_MS, occurrenceId, occurrenceKey } from './occurrence-id.js'
export type { ScheduleInfo } from './schedule-info.js'
export {
  createScheduler,
  type DefineOptions,
  type DefineResult,
  type ScheduleChanges,
  type Scheduler,
  type SchedulerOptions,
  type TickOccurrence,
  type TickOptions,
  type TickResult,
} from './scheduler.js'
export type { RunningScheduler, StartSchedulerOptions } from './scheduler-loop.js'
export { type SchedulerPluginOptions, scheduler } from './scheduler-plugin.js'
export { startScheduler } from './start-scheduler.js'
export {
  type CatchUp,
  firstRun,
  planTick,
  resumeRun,
  type TickPlan,
  upcomingRuns,
} from './timing/plan-tick.js'
export {
  type CronTiming,
  type IntervalTiming,
  occurrenceAfter,
  occurrenceAtOrAfter,
  occurrencesWithin,
  type ScheduleTiming,
} from './timing/schedule-timing.js'
