import type { Executor, Migration, Namespace } from '@iddqueue/schema'
import type { Logger } from '../broker/logger.js'
import type { Message, ResultOptions } from '../message/message.js'
import type { Middleware } from './middleware.js'

/** Undoes a plugin's setup when the broker closes. */
export type Teardown = () => void | Promise<void>

/** Reads stored results: what `message.result()` calls. Provided by `@iddqueue/results`. */
export type ResultReader = (message: Message, options: ResultOptions) => Promise<unknown>

/** What a plugin's `setup` receives. */
export interface PluginContext {
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
  readonly middleware?: Middleware
  /** Runs once before the broker's first operation. */
  setup?(context: PluginContext): Teardown | undefined | Promise<Teardown | undefined>
}
