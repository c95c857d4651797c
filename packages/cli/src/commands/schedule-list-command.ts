import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withScheduler } from '../with-scheduler.js'

/** @internal `iddqueue schedule list` prints every schedule of the namespace as JSON, times in UTC. */
export const scheduleListCommand: Command = {
  name: 'schedule list',
  summary: 'list the schedules, by name (JSON, times in UTC)',
  async run(input, io) {
    const items = await withScheduler(input.global, io, (schedules) => schedules.list())
    printJson(io, { items })
    return EXIT.ok
  },
}
