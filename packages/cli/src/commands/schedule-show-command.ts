import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withScheduler } from '../with-scheduler.js'

/** @internal `iddqueue schedule show NAME` prints one schedule as JSON; exit 3 when there is none. */
export const scheduleShowCommand: Command = {
  name: 'schedule show',
  operands: ['NAME'],
  summary: 'show one schedule (JSON)',
  async run(input, io) {
    const name = input.operands[0]!
    const info = await withScheduler(input.global, io, (schedules) => schedules.get(name))
    if (!info) {
      printJson(io, { name, status: 'missing' })
      io.err(`iddqueue schedule show: Schedule ${JSON.stringify(name)} does not exist\n`)
      return EXIT.notFound
    }
    printJson(io, info)
    return EXIT.ok
  },
}
