import { InvalidOptionError } from '@iddqueue/core'
import { createScheduler } from './scheduler.js'
import type { RunningScheduler, StartSchedulerOptions } from './scheduler-loop.js'

/**
 * Starts a scheduler loop for a broker created with the `scheduler()`
 * plugin, in any process. Many loops (in many processes) share the work:
 * each due occurrence is published once. The loop sleeps until the earliest
 * next run by PostgreSQL's clock and wakes at once when a schedule changes.
 *
 * @example
 * import { createBroker } from '@iddqueue/core'
 * import { scheduler, startScheduler } from '@iddqueue/scheduler'
 *
 * const broker = createBroker({ url: process.env.DATABASE_URL, plugins: [scheduler()] })
 * const running = startScheduler({ broker })
 * running.stopOnSignals()
 * await running.stopped
 * await broker.close()
 */
export function startScheduler(options: StartSchedulerOptions): RunningScheduler {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('Invalid scheduler options: expected an object with a broker')
  }
  const { broker, ...loop } = options
  return createScheduler(broker).start(loop)
}
