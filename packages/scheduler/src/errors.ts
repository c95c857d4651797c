import { IddqueueError } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'

/**
 * `create()` found a schedule with that name in the namespace; it never
 * overwrites one. Use `update()`, or `define()` to upsert.
 *
 * @example
 * try {
 *   await schedules.create({ name: 'reports', actor: 'generate_report', everyMs: 60_000 })
 * } catch (error) {
 *   if (ScheduleExistsError.isInstance(error)) console.log('already scheduled:', error.scheduleName)
 * }
 */
export class ScheduleExistsError extends IddqueueError {
  constructor(readonly scheduleName: string) {
    super(
      `Schedule ${describeValue(scheduleName)} already exists; create() never overwrites one (use update() or define())`,
    )
  }
}

/**
 * No schedule has that name in the namespace.
 *
 * @example
 * await schedules.enable('nope') // throws ScheduleNotFoundError: Schedule "nope" does not exist
 */
export class ScheduleNotFoundError extends IddqueueError {
  constructor(readonly scheduleName: string) {
    super(`Schedule ${describeValue(scheduleName)} does not exist`)
  }
}
