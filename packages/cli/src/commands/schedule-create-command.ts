import { type ScheduleDefinition, ScheduleExistsError } from '@iddqueue/scheduler'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { SCHEDULE_OPTIONS, scheduleFields } from '../schedule-fields.js'
import { withScheduler } from '../with-scheduler.js'

/**
 * @internal `iddqueue schedule create NAME ACTOR (--every-ms N | --cron EXPR
 * [--timezone TZ]) ...` creates a schedule and prints it as JSON; exit 4
 * when the name is taken (nothing is overwritten).
 */
export const scheduleCreateCommand: Command = {
  name: 'schedule create',
  operands: ['NAME', 'ACTOR'],
  options: SCHEDULE_OPTIONS,
  summary:
    'create a schedule sending to ACTOR every --every-ms or on --cron in --timezone (JSON); never overwrites one',
  async run(input, io) {
    const [name, actor] = input.operands as [string, string]
    const definition: ScheduleDefinition = { name, actor, ...scheduleFields(input) }
    return withScheduler(input.global, io, async (schedules) => {
      try {
        printJson(io, await schedules.create(definition))
        return EXIT.ok
      } catch (error) {
        if (!ScheduleExistsError.isInstance(error)) throw error
        printJson(io, { name, status: 'exists' })
        io.err(`iddqueue schedule create: ${error.message}\n`)
        return EXIT.wrongState
      }
    })
  },
}
