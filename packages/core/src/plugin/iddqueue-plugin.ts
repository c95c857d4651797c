import type { Executor, Migration, Namespace } from '@iddqueue/schema'
import type { ActorDefinition } from '../actor/actor-definition.js'
import type { Broker } from '../broker/broker.js'
import type { EnqueueEntry, EnqueueManyOptions } from '../enqueue/enqueue-options.js'
import type { Message, ResultOptions } from '../message/message.js'
import type { BrokerEventListener, BrokerEventName } from '../runtime/events.js'
import type { Logger } from '../runtime/logger.js'
import type { ClaimClauses } from '../sql/claim.js'
import type { SettleClauses } from '../sql/settle-clauses.js'
import type { Middleware } from './middleware-interface.js'

/**
 * Undoes a plugin's setup when the broker closes.
 *
 * @example
 * const heartbeat = (): IddqueuePlugin => ({
 *   name: 'heartbeat-log',
 *   setup(context) {
 *     const timer = setInterval(() => context.logger.info('alive'), 60_000)
 *     const teardown: Teardown = () => clearInterval(timer)
 *     return teardown
 *   },
 * })
 */
export type Teardown = () => void | Promise<void>

/**
 * Reads stored results: what `message.result()` calls. Provided by `@iddqueue/results`.
 *
 * @example
 * const reader: ResultReader = async (message) => {
 *   const [row] = await executor.query<{ result: unknown }>('select result from app.results where id = $1', [message.id])
 *   return row?.result
 * }
 * // in a plugin's setup: context.provideResults(reader)
 */
export type ResultReader = (message: Message, options: ResultOptions) => Promise<unknown>

/**
 * What a plugin's `setup` receives.
 *
 * @example
 * const watcher = (): IddqueuePlugin => ({
 *   name: 'wake-watcher',
 *   async setup(context: PluginContext) {
 *     const stop = await context.subscribe(context.namespace.channel('wake'), (queue) =>
 *       context.logger.debug('wake-up', { queue }),
 *     )
 *     return stop
 *   },
 * })
 */
export interface PluginContext {
  /** The broker being set up: for plugins that send messages (`broker.enqueue`) or listen to its events. */
  readonly broker: Broker
  readonly namespace: Namespace
  /** The broker's connection. */
  readonly executor: Executor
  readonly logger: Logger
  /** Subscribes to a NOTIFY channel on the broker's shared LISTEN connection. */
  subscribe(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>>
  /** False in poll-only mode. */
  readonly listening: boolean
  /** Makes `message.result()` work. */
  provideResults(reader: ResultReader): void
  /**
   * The broker's `enqueueMany()`: sends messages (callbacks, follow-ups) on
   * the plugin's behalf. `transaction` may also be the `executor` of a
   * settle hook, so the messages commit with the outcomes.
   */
  enqueueMany(
    entries: readonly (Message | EnqueueEntry)[],
    options?: EnqueueManyOptions,
  ): Promise<Message[]>
  /**
   * Listens to a broker event, as `broker.on()` does. Returns a function
   * that stops listening.
   *
   * @example
   * const counter = (): IddqueuePlugin => ({
   *   name: 'counter',
   *   setup(context) {
   *     let done = 0
   *     return context.on('message:completed', () => done++)
   *   },
   * })
   */
  on<E extends BrokerEventName>(event: E, listener: BrokerEventListener<E>): () => void
}

/**
 * A feature package: its tables, actor options, middleware and setup. Each
 * package exports a factory returning one, and the app composes them:
 * `createBroker({ url, plugins: [results(), coordination()] })`.
 *
 * @example
 * const audit = (): IddqueuePlugin => ({
 *   name: 'audit',
 *   actorOptions: ['audit'],
 *   middleware: {
 *     async process(event, next) {
 *       const outcome = await next()
 *       if (event.actor.options.audit) console.log(event.message.id, outcome.kind)
 *       return outcome
 *     },
 *   },
 * })
 */
export interface IddqueuePlugin {
  /** A package name such as `@iddqueue/results`; also its migration owner. */
  readonly name: string
  /** Append-only migrations, applied by `broker.migrate()` after core's. */
  readonly migrations?: readonly Migration[]
  /** Actor option keys this plugin owns; any other unknown key is refused. */
  readonly actorOptions?: readonly string[]
  /**
   * Message option keys a follow-up inherits from the message whose run
   * sends it (a pipeline's next step, an `onSuccess`/`onFailure` callback),
   * unless the follow-up sets them itself. The tracing plugin keeps a
   * pipeline's creation context this way.
   *
   * @example
   * const tenant = (): IddqueuePlugin => ({ name: 'tenant', inheritedOptions: ['tenant'] })
   */
  readonly inheritedOptions?: readonly string[]
  readonly middleware?: Middleware
  /**
   * Checks the options it owns when `broker.actor()` declares an actor, after
   * core's own checks and before the actor is registered: throw (an
   * `InvalidOptionError` naming the actor, the key and what was expected) to
   * refuse the declaration. Runs for every actor, with or without the
   * plugin's keys; `actor.options` has core's defaults filled in.
   *
   * @example
   * const audit = (): IddqueuePlugin => ({
   *   name: 'audit',
   *   actorOptions: ['audit'],
   *   checkActor(actor) {
   *     const value = actor.options.audit
   *     if (value !== undefined && typeof value !== 'boolean') {
   *       throw new InvalidOptionError(`Invalid option audit for actor ${actor.name}: expected a boolean`)
   *     }
   *   },
   * })
   */
  checkActor?(actor: ActorDefinition): void
  /**
   * Adds message-level options to a message being built (`actor.message()`,
   * `send()`, `broker.message()`), before it is encoded or sent: the
   * returned keys are merged into its options. Throw (an
   * `InvalidOptionError`) to refuse the message; nothing is stored.
   *
   * @example
   * const tenant = (): IddqueuePlugin => ({
   *   name: 'tenant',
   *   messageOptions: ({ args }) => ({ tenant: String(args[0]) }),
   * })
   */
  messageOptions?(build: MessageBuild): Readonly<Record<string, unknown>> | undefined
  /**
   * Clauses this plugin adds to the claim statement of a worker consuming
   * `queues` (decision 0012), or undefined to leave it as it is. Asked once
   * when the worker starts; `actors` are the ones declared on those queues.
   * At most one plugin may return a `pick`.
   *
   * @example
   * const noSpam = (): IddqueuePlugin => ({
   *   name: 'no-spam',
   *   claimClauses: () => ({ eligible: `r.actor <> 'spam'` }),
   * })
   */
  claimClauses?(
    queues: readonly string[],
    actors: readonly ActorDefinition[],
  ): ClaimClauses | undefined
  /**
   * Clauses this plugin adds to the settle statement of the messages they
   * concern (decision 0016), for the broker's namespace: written with the
   * outcomes in one statement, instead of a transaction and a settle hook.
   * Asked once when the broker is created.
   *
   * @example
   * const audit = (): IddqueuePlugin => ({
   *   name: 'audit',
   *   settleClauses: (ns) => ({
   *     concerns: (message) => message.options.audit === true,
   *     ctes: `audited as (insert into ${ns.table('audit')} (id, state) select id, state from settled)`,
   *   }),
   * })
   */
  settleClauses?(namespace: Namespace): SettleClauses | undefined
  /** Runs once before the broker's first operation. */
  setup?(context: PluginContext): Teardown | undefined | Promise<Teardown | undefined>
}

/**
 * A message being built, as `IddqueuePlugin.messageOptions` sees it.
 *
 * @example
 * const messageOptions = (build: MessageBuild) =>
 *   build.actor?.options.audit ? { auditedAt: new Date().toISOString() } : undefined
 */
export interface MessageBuild {
  readonly actorName: string
  /** The actor, when it is declared in this process. */
  readonly actor: ActorDefinition | undefined
  readonly queue: string
  readonly args: readonly unknown[]
  /** The message-level options given by the caller. */
  readonly options: Readonly<Record<string, unknown>>
}
