import type { TickResult } from '@iddqueue/scheduler'
import { integerOption } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { plural } from '../plural.js'
import { withScheduler } from '../with-scheduler.js'

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const

function summary(result: TickResult) {
  return {
    schedules: result.schedules,
    published: result.published,
    skipped: result.skipped,
    failed: result.failed.map((f) => ({
      schedule: f.schedule,
      error: f.error instanceof Error ? f.error.message : String(f.error),
    })),
  }
}

/**
 * @internal `iddqueue scheduler [--once]` publishes due occurrences: once
 * (one tick, printed as JSON; exit 1 when a schedule failed), or until
 * SIGTERM/SIGINT, which let the current tick finish. Any number may run.
 */
export const schedulerCommand: Command = {
  name: 'scheduler',
  options: {
    once: { type: 'boolean' },
    limit: { type: 'string', value: 'N' },
    'safety-poll-ms': { type: 'string', value: 'N' },
  },
  summary:
    'publish due schedule occurrences until SIGTERM or SIGINT (which finish the current tick), or one tick with --once (JSON)',
  async run(input, io) {
    const limit = integerOption(input, 'limit')
    const safetyPollMs = integerOption(input, 'safety-poll-ms')
    return withScheduler(input.global, io, async (schedules) => {
      if (input.values.once === true) {
        const result = await schedules.tick(limit === undefined ? {} : { limit })
        printJson(io, summary(result))
        return result.failed.length > 0 ? EXIT.failed : EXIT.ok
      }
      let published = 0
      const running = schedules.start({
        ...(limit === undefined ? {} : { limit }),
        ...(safetyPollMs === undefined ? {} : { safetyPollMs }),
        onTick: (result) => {
          published += result.published.length
          for (const o of result.published)
            io.err(`published ${o.schedule} ${o.intendedAt.toISOString()} ${o.messageId}\n`)
        },
      })
      let removeHandlers = () => {}
      const signalled = new Promise<NodeJS.Signals>((resolve) => {
        const handler = (s: NodeJS.Signals) => resolve(s)
        for (const name of STOP_SIGNALS) process.once(name, handler)
        removeHandlers = () => {
          for (const name of STOP_SIGNALS) process.off(name, handler)
        }
      })
      io.err('scheduler running; SIGTERM or SIGINT stops it after the current tick\n')
      // A loop that cannot start (tables missing, no connection) ends the command with its error.
      const signal = await Promise.race([signalled, running.stopped.then(() => 'stopped' as const)])
      removeHandlers()
      io.err(`${signal}: stopping after the current tick\n`)
      await running.stop()
      io.err(`scheduler stopped; ${plural(published, 'occurrence')} published\n`)
      return EXIT.ok
    })
  },
}
