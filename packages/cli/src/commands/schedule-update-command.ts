import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { SCHEDULE_OPTIONS, scheduleFields } from '../schedule-fields.js'
import { withScheduler } from '../with-scheduler.js'
import { notFound } from './schedule-not-found.js'

/** @internal `iddqueue schedule update NAME [options]` changes a schedule and prints it as JSON; exit 3 when there is none. */
export const scheduleUpdateCommand: Command = {
  name: 'schedule update',
  operands: ['NAME'],
  options: {
    ...SCHEDULE_OPTIONS,
    actor: { type: 'string', value: 'ACTOR' },
    enabled: { type: 'boolean' },
  },
  summary: 'change a schedule (a new timing takes effect at its next occurrence from now) (JSON)',
  async run(input, io) {
    const name = input.operands[0]!
    const changes: Record<string, unknown> = { ...scheduleFields(input) }
    const actor = input.values.actor
    if (typeof actor === 'string') changes.actor = actor
    if (input.values.enabled === true) changes.enabled = true
    return withScheduler(input.global, io, async (schedules) =>
      notFound(io, 'schedule update', name, async () => {
        printJson(io, await schedules.update(name, changes))
        return EXIT.ok
      }),
    )
  },
}
