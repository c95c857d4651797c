import { type IddqueuePlugin, InvalidOptionError } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import { migrationSet } from './migrations.js'
import { createScheduler } from './scheduler.js'
import { registerHost } from './scheduler-host.js'
import {
  type RunningScheduler,
  resolveLoopOptions,
  type StartSchedulerOptions,
} from './scheduler-loop.js'

/**
 * Options of {@link scheduler}.
 *
 * @example
 * const plugin = scheduler({ runInWorkers: true })
 * const tuned = scheduler({ runInWorkers: { safetyPollMs: 30_000 } })
 */
export interface SchedulerPluginOptions {
  /**
   * Run the scheduler loop in this process while one of its workers runs
   * (from the first `worker:started` to the last `worker:stopping`), so a
   * small app needs no separate scheduler process. Every worker process may
   * do so: they share the work safely. `true` or the loop's options.
   * Default `false`.
   */
  readonly runInWorkers?: boolean | Omit<StartSchedulerOptions, 'broker'>
}

/**
 * The scheduler plugin: its `schedules` table (migrations applied by
 * `broker.migrate()`), and optionally the scheduler loop inside worker
 * processes. Schedules themselves are managed with {@link createScheduler}.
 *
 * @example
 * import { createBroker } from '@iddqueue/core'
 * import { createScheduler, scheduler } from '@iddqueue/scheduler'
 *
 * const broker = createBroker({ url: process.env.DATABASE_URL, plugins: [scheduler({ runInWorkers: true })] })
 * await broker.migrate() // creates the schedules table
 * await createScheduler(broker).define([
 *   { name: 'nightly-report', actor: 'generate_report', cron: '0 3 * * *', timezone: 'Europe/Paris' },
 * ])
 * await broker.worker().start() // also publishes due occurrences
 */
export function scheduler(options: SchedulerPluginOptions = {}): IddqueuePlugin {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError(
      `Invalid scheduler() options ${describeValue(options)}: expected an object`,
    )
  const run = options.runInWorkers ?? false
  // Checked now: the loop starts inside a worker:started listener, where a refusal would be lost.
  if (typeof run !== 'boolean') {
    if (typeof run !== 'object' || run === null)
      throw new InvalidOptionError(
        `Invalid runInWorkers ${describeValue(run)}: expected true, false or the loop's options`,
      )
    resolveLoopOptions(run, 'runInWorkers')
  }
  return {
    name: migrationSet.owner,
    migrations: migrationSet.migrations,
    setup(context) {
      const unregister = registerHost(context)
      if (run === false) return unregister
      const broker = context.broker
      let workers = 0
      let loop: RunningScheduler | undefined
      let stopping: Promise<void> = Promise.resolve()
      const offStarted = broker.on('worker:started', () => {
        workers += 1
        if (workers === 1) {
          loop = createScheduler(broker).start(run === true ? {} : run)
        }
      })
      const offStopping = broker.on('worker:stopping', () => {
        workers = Math.max(0, workers - 1)
        if (workers === 0 && loop) {
          const current = loop
          loop = undefined
          stopping = stopping.then(() => current.stop())
        }
      })
      return async () => {
        offStarted()
        offStopping()
        await loop?.stop()
        await stopping
        unregister()
      }
    },
  }
}
