import { integerOption } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withScheduler } from '../with-scheduler.js'
import { notFound } from './schedule-not-found.js'

/** @internal `iddqueue schedule next NAME [--count N]` prints the next occurrences (UTC) as JSON; exit 3 when there is none. */
export const scheduleNextCommand: Command = {
  name: 'schedule next',
  operands: ['NAME'],
  options: { count: { type: 'string', value: 'N' } },
  summary: 'print the next --count (default 5) occurrences of a schedule (JSON, UTC)',
  async run(input, io) {
    const name = input.operands[0]!
    const count = integerOption(input, 'count') ?? 5
    return withScheduler(input.global, io, (schedules) =>
      notFound(io, 'schedule next', name, async () => {
        const runs = await schedules.nextRuns(name, count)
        printJson(io, { name, runs: runs.map((d) => d.toISOString()) })
        return EXIT.ok
      }),
    )
  },
}
