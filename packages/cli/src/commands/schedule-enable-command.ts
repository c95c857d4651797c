import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withScheduler } from '../with-scheduler.js'
import { notFound } from './schedule-not-found.js'

/** @internal `iddqueue schedule enable NAME`; exit 3 when there is no such schedule. */
export const scheduleEnableCommand: Command = {
  name: 'schedule enable',
  operands: ['NAME'],
  summary:
    'enable a schedule; it resumes at its next occurrence from now (missed ones are not caught up)',
  async run(input, io) {
    const name = input.operands[0]!
    return withScheduler(input.global, io, (schedules) =>
      notFound(io, 'schedule enable', name, async () => {
        await schedules.enable(name)
        if (input.json) printJson(io, { name, status: 'enabled' })
        else io.out(`enabled ${name}\n`)
        return EXIT.ok
      }),
    )
  },
}
