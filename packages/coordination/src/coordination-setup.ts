import type { Logger, PluginContext, SetupLatch } from '@iddqueue/core'
import type { Executor, Namespace } from '@iddqueue/schema'
import type { KeyWaiters } from './key-waiters.js'

/** @internal What the plugin keeps from a broker's setup. */
export interface CoordinationSetup {
  readonly executor: Executor
  readonly ns: Namespace
  /** The NOTIFY channel of releases and opened barriers. */
  readonly channel: string
  readonly waiters: KeyWaiters
  /** How often a waiter rechecks when notifications are unavailable. */
  readonly pollIntervalMs: number
  readonly enqueueMany: PluginContext['enqueueMany']
  readonly logger: Logger
}

/** @internal The plugin's latch: limiters, barriers and groups wait on it for a broker. */
export type CoordinationLatch = SetupLatch<CoordinationSetup>
