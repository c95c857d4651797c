import type { Executor, IddqueueDatabase, Namespace } from '@iddqueue/schema'
import type { Kysely } from 'kysely'
import type { ActorDefinition } from '../actor/actor-definition.js'
import type { MessageHost } from '../message/message.js'
import type { IddqueuePlugin } from '../plugin/iddqueue-plugin.js'
import type { Middleware } from '../plugin/middleware-interface.js'
import type { Statements } from '../sql/statements.js'
import type { EventBus } from './events.js'
import type { Listener } from './listener.js'
import type { Logger } from './logger.js'

/** @internal Everything the broker's modules share: one per broker. */
export interface BrokerContext {
  readonly ns: Namespace
  readonly executor: Executor
  readonly statements: Statements
  readonly listener: Listener
  readonly logger: Logger
  readonly events: EventBus
  readonly actors: Map<string, ActorDefinition>
  readonly plugins: readonly IddqueuePlugin[]
  /** Core's default middleware, then each plugin's, outermost first. */
  readonly middleware: readonly Middleware[]
  readonly enqueueHooks: readonly NonNullable<Middleware['enqueue']>[]
  /** Option keys follow-ups inherit from the running message (see `IddqueuePlugin.inheritedOptions`). */
  readonly inheritedOptions: readonly string[]
  readonly maxPayloadBytes: number
  /** Successful messages are deleted, not kept `done`. */
  readonly deleteOnSuccess: boolean
  /**
   * Compiles typed Kysely queries for this namespace. Loads Kysely on first
   * use, so that workers, which only run hand-written statements, never do.
   */
  queries(): Promise<Kysely<IddqueueDatabase>>
  readonly host: MessageHost
  /** Resolves once every plugin's setup has run. */
  ready(): Promise<void>
  /** Throws BrokerClosedError after close(). */
  assertOpen(): void
}
