import type { Broker } from '@iddqueue/core'
import { createScheduler, type Scheduler, scheduler } from '@iddqueue/scheduler'
import type { CliIo } from './cli-io.js'
import type { GlobalOptions } from './global-options.js'
import { withBroker } from './with-broker.js'

/** @internal Runs `use` with the schedules of the command's namespace (a broker with the scheduler plugin). */
export function withScheduler<T>(
  options: GlobalOptions,
  io: CliIo,
  use: (schedules: Scheduler, broker: Broker) => Promise<T>,
): Promise<T> {
  return withBroker(options, io, (broker) => use(createScheduler(broker), broker), [scheduler()])
}
