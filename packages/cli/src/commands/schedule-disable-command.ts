import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withScheduler } from '../with-scheduler.js'
import { notFound } from './schedule-not-found.js'

/** @internal `iddqueue schedule disable NAME`; exit 3 when there is no such schedule. */
export const scheduleDisableCommand: Command = {
  name: 'schedule disable',
  operands: ['NAME'],
  summary:
    'disable a schedule: waits for a tick publishing it, then no more occurrences; queued messages stay',
  async run(input, io) {
    const name = input.operands[0]!
    return withScheduler(input.global, io, (schedules) =>
      notFound(io, 'schedule disable', name, async () => {
        await schedules.disable(name)
        if (input.json) printJson(io, { name, status: 'disabled' })
        else io.out(`disabled ${name}\n`)
        return EXIT.ok
      }),
    )
  },
}
