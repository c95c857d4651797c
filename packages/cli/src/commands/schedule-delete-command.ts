import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withScheduler } from '../with-scheduler.js'

/** @internal `iddqueue schedule delete NAME`; exit 3 when there is no such schedule. Queued messages stay. */
export const scheduleDeleteCommand: Command = {
  name: 'schedule delete',
  operands: ['NAME'],
  summary: 'delete a schedule; its queued messages stay',
  async run(input, io) {
    const name = input.operands[0]!
    const deleted = await withScheduler(input.global, io, (schedules) => schedules.delete(name))
    if (!deleted) {
      printJson(io, { name, status: 'missing' })
      io.err(`iddqueue schedule delete: Schedule ${JSON.stringify(name)} does not exist\n`)
      return EXIT.notFound
    }
    if (input.json) printJson(io, { name, status: 'deleted' })
    else io.out(`deleted ${name}\n`)
    return EXIT.ok
  },
}
