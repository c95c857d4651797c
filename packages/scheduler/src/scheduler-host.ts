import type { Broker, Logger, PluginContext } from '@iddqueue/core'
import type { Executor, Namespace } from '@iddqueue/schema'
import { type SchedulerStatements, schedulerStatements } from './sql/statements.js'

/** @internal What a scheduler uses of a broker set up with the plugin. */
export interface SchedulerHost {
  readonly broker: Broker
  readonly executor: Executor
  readonly ns: Namespace
  readonly logger: Logger
  readonly listening: boolean
  readonly statements: SchedulerStatements
  subscribe(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>>
}

const hosts = new WeakMap<Broker, SchedulerHost>()

/** @internal Called by the plugin's setup. */
export function registerHost(context: PluginContext): () => void {
  const host: SchedulerHost = {
    broker: context.broker,
    executor: context.executor,
    ns: context.namespace,
    logger: context.logger,
    listening: context.listening,
    statements: schedulerStatements(context.namespace),
    subscribe: (channel, handler) => context.subscribe(channel, handler),
  }
  hosts.set(context.broker, host)
  return () => {
    if (hosts.get(context.broker) === host) hosts.delete(context.broker)
  }
}

/** @internal The host of a broker whose plugins are set up, if it has the scheduler plugin. */
export function hostOf(broker: Broker): SchedulerHost | undefined {
  return hosts.get(broker)
}
