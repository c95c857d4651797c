import {
  coreMigrations,
  type Executor,
  type IddqueueDatabase,
  IddqueueError,
  type MigrateResult,
  type MigrationSet,
  migrate,
  type Namespace,
  toNamespace,
} from '@iddqueue/schema'
import type { Kysely } from 'kysely'
import { type Actor, createActor } from '../actor/actor.js'
import type { ContextRule, Handler } from '../actor/actor-context.js'
import type { ActorDefinition } from '../actor/actor-definition.js'
import { type ActorOptions, resolveActorOptions } from '../actor/actor-options.js'
import { assertName, assertQueueName } from '../actor/names.js'
import { completedCount } from '../composition/completed-count.js'
import { Group } from '../composition/group.js'
import { type LastResult, Pipeline } from '../composition/pipeline.js'
import type { CompositionHost } from '../composition/run-options.js'
import { enqueueEntries } from '../enqueue/enqueue.js'
import {
  type EnqueueEntry,
  type EnqueueManyOptions,
  MAX_BATCH,
  type SendOptions,
} from '../enqueue/enqueue-options.js'
import { prepareEntry } from '../enqueue/prepared-entry.js'
import { resolveSendTimeout } from '../enqueue/send-deadline.js'
import { BrokerClosedError, InvalidStateError, TransactionalActorError } from '../errors.js'
import { checkMessage } from '../message/check-message.js'
import { Message, type MessageHost, type ResultOptions } from '../message/message.js'
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../message/message-codec.js'
import { uuid7 } from '../message/uuid7.js'
import { defaultMiddleware } from '../middleware/default-middleware.js'
import {
  type CancellationStatus,
  type CancelOptions,
  type CancelResult,
  cancel,
  cancellationStatus,
} from '../ops/cancel.js'
import { type CancelManyOptions, type CancelManyResult, cancelMany } from '../ops/cancel-many.js'
import {
  type DeleteMessagesOptions,
  type DeleteMessagesResult,
  deleteMessages,
} from '../ops/delete-messages.js'
import {
  type FailedMessage,
  type ListFailedOptions,
  type ListFailedResult,
  listFailed,
  type RetryFailedResult,
  retryFailed,
  type ShowFailedOptions,
  showFailed,
} from '../ops/failed.js'
import { type GetMessageOptions, getMessage, type MessageInfo } from '../ops/get-message.js'
import { type JoinOptions, join } from '../ops/join.js'
import {
  type FlushOptions,
  flush,
  type PurgeOptions,
  type PurgeResult,
  purge,
  type RecoverOptions,
  recover,
} from '../ops/maintenance.js'
import { type PauseOptions, type PauseResult, pause, pausedQueues, resume } from '../ops/pause.js'
import {
  type RescheduleOptions,
  type RescheduleResult,
  reschedule,
  runNow,
} from '../ops/reschedule.js'
import { type RetryManyOptions, type RetryManyResult, retryMany } from '../ops/retry-many.js'
import {
  checkObject,
  checkUuid,
  flagOption,
  integerOption,
  labelledRefusal,
  refuseOption,
} from '../options/check-option.js'
import type { IddqueuePlugin, ResultReader, Teardown } from '../plugin/iddqueue-plugin.js'
import type { Middleware } from '../plugin/middleware-interface.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { openConnection } from '../runtime/connection.js'
import { type BrokerEventListener, type BrokerEventName, EventBus } from '../runtime/events.js'
import { Listener } from '../runtime/listener.js'
import { consoleLogger, type Logger } from '../runtime/logger.js'
import { TransactionPermits, transactionCapacity } from '../runtime/transaction-permits.js'
import { Waker } from '../runtime/waker.js'
import { statements } from '../sql/statements.js'
import { createWorker, type Worker } from '../worker/worker.js'
import type { WorkerOptions } from '../worker/worker-options.js'
import type { BrokerOptions } from './broker-options.js'

/**
 * The entry point: declares actors, sends messages, runs workers and
 * maintenance for one namespace. Made by {@link createBroker}.
 *
 * @example
 * const broker: Broker = createBroker({ url: process.env.DATABASE_URL })
 * await broker.migrate()
 * const add = broker.actor('add', (a: number, b: number) => a + b)
 * await add.send(1, 2)
 * await broker.close()
 */
export class Broker {
  readonly #core: BrokerContext
  readonly #close: () => Promise<void>
  readonly #workers = new Set<Worker>()
  #closed = false
  #setup: Promise<void> | undefined
  #teardowns: Teardown[] = []
  #resultReader: ResultReader | undefined

  /** @internal Use {@link createBroker}. */
  constructor(options: BrokerOptions) {
    const ns = toNamespace(options.namespace)
    const logger = options.logger ?? consoleLogger('warn')
    const maxPayloadBytes = integerOption(
      'maxPayloadBytes',
      options.maxPayloadBytes,
      DEFAULT_MAX_PAYLOAD_BYTES,
      { min: 1024 },
    )
    const sendTimeoutMs = resolveSendTimeout(options.sendTimeoutMs)
    const currentMessage = flagOption('currentMessage', options.currentMessage)
    const deleteOnSuccess = flagOption('deleteOnSuccess', options.deleteOnSuccess)
    const plugins = options.plugins ?? []
    const names = new Set<string>()
    for (const plugin of plugins) {
      if (typeof plugin?.name !== 'string')
        throw labelledRefusal('plugins', plugin, 'an object with a name', 'plugin')
      if (names.has(plugin.name)) {
        throw refuseOption(`Plugin ${plugin.name} is listed twice`, {
          option: 'plugins',
          value: plugin.name,
          expected: 'plugins with distinct names',
        })
      }
      names.add(plugin.name)
    }
    const connection = openConnection(options)
    let queries: Promise<Kysely<IddqueueDatabase>> | undefined
    const middleware: Middleware[] = [
      ...defaultMiddleware({ currentMessage }),
      ...plugins.flatMap((plugin) => (plugin.middleware ? [plugin.middleware] : [])),
      ...(options.middleware ?? []),
    ]
    const host: MessageHost = {
      readResult: (message, resultOptions) => this.#readResult(message, resultOptions),
    }
    const built = statements(
      ns,
      deleteOnSuccess,
      plugins.flatMap((plugin) => plugin.settleClauses?.(ns) ?? []),
    )
    const listener = new Listener(connection.listen, logger)
    const waker = new Waker(connection.executor, built, listener, logger)
    this.#close = async () => {
      await waker.drain()
      await connection.close()
    }
    this.#core = {
      ns,
      executor: connection.executor,
      transactions: connection.transactions,
      transactionPermits: new TransactionPermits(transactionCapacity(connection.transactions)),
      statements: built,
      listener,
      waker,
      logger,
      events: new EventBus(logger),
      actors: new Map(),
      plugins,
      middleware,
      enqueueHooks: middleware.flatMap((m) => (m.enqueue ? [m.enqueue.bind(m)] : [])),
      inheritedOptions: [...new Set(plugins.flatMap((plugin) => plugin.inheritedOptions ?? []))],
      maxPayloadBytes,
      sendTimeoutMs,
      deleteOnSuccess,
      queries: () => {
        queries ??= import('@iddqueue/schema/kysely').then(({ createQueryBuilder }) =>
          createQueryBuilder(ns),
        )
        return queries
      },
      host,
      ready: () => this.#ready(),
      assertOpen: () => {
        if (this.#closed) throw new BrokerClosedError('The broker is closed')
      },
    }
  }

  /** The namespace (schema and prefix) this broker works in. */
  get namespace(): Namespace {
    return this.#core.ns
  }

  /**
   * What the broker runs its own statements on (its pool, or the instance it
   * was given), for tools that read iddqueue's tables: statistics, dashboards.
   *
   * @example
   * const [row] = await broker.executor.query<{ n: number }>(
   *   `select count(*)::int as n from ${broker.namespace.table('messages')}`,
   * )
   */
  get executor(): Executor {
    return this.#core.executor
  }

  /**
   * The broker's logger (`createBroker({ logger })`, or the console logger).
   *
   * @example
   * broker.logger.info('dashboard mounted', { basePath: '/jobs' })
   */
  get logger(): Logger {
    return this.#core.logger
  }

  /**
   * The plugins the broker was created with, in order.
   *
   * @example
   * const hasScheduler = broker.plugins.some((plugin) => plugin.name === '@iddqueue/scheduler')
   */
  get plugins(): readonly IddqueuePlugin[] {
    return this.#core.plugins
  }

  /**
   * Listens to a notification channel of this broker's namespace on its one
   * shared LISTEN connection (no new connection), for tools that refresh on
   * activity, such as a dashboard. Notifications are hints: also poll.
   * Resolves to a function that stops listening.
   *
   * @example
   * const stop = await broker.subscribe(broker.namespace.channel('wake'), (queue) => refresh(queue))
   * await stop()
   */
  subscribe(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>> {
    return this.#core.listener.subscribe(channel, handler)
  }

  /** @internal Shared state for workers, operations and plugins. */
  get context(): BrokerContext {
    return this.#core
  }

  /**
   * Declares an actor: a named handler whose messages go to `options.queue`.
   * The handler receives the message's arguments, then an `ActorContext`.
   * Unknown options, and invalid values of core's or a plugin's options
   * (see `IddqueuePlugin.checkActor`), are refused here, not when the first
   * message runs.
   *
   * @example
   * const sendEmail = broker.actor(
   *   'send_email',
   *   async (to: string, subject: string, ctx: ActorContext) => {
   *     await mailer.send({ to, subject, signal: ctx.signal })
   *   },
   *   { queue: 'emails', maxRetries: 5 },
   * )
   * await sendEmail.send('ada@example.com', 'Welcome')
   */
  actor<H extends Handler>(
    name: string,
    handler: H & ContextRule<H>,
    options: ActorOptions = {},
  ): Actor<H> {
    assertName('actor', name)
    if (typeof handler !== 'function') {
      throw labelledRefusal('handler', handler, 'a function', `handler for actor ${name}`)
    }
    if (this.#core.actors.has(name)) {
      throw new InvalidStateError(`Actor ${name} is already declared on this broker`)
    }
    checkObject('options', options, `options for actor ${name}`)
    const pluginKeys = new Set(this.#core.plugins.flatMap((plugin) => plugin.actorOptions ?? []))
    const resolved = resolveActorOptions(name, options as Record<string, unknown>, pluginKeys)
    if (resolved.transactional && this.#core.transactions.unavailable !== undefined) {
      throw new TransactionalActorError(
        `Actor ${name} is transactional, but ${this.#core.transactions.unavailable}: give the broker a url, a postgres.js pool or a Kysely instance`,
      )
    }
    const definition: ActorDefinition = { name, queue: resolved.queue, handler, options: resolved }
    for (const plugin of this.#core.plugins) plugin.checkActor?.(definition)
    this.#core.actors.set(name, definition)
    return createActor(
      {
        buildMessage: (actor, queue, args, priority, extra) =>
          this.#build(actor, queue, args, priority, extra),
        enqueue: (message, sendOptions) => this.enqueue(message, sendOptions),
      },
      name,
      handler,
      resolved,
    )
  }

  /**
   * Builds an unsent message for an actor this process may not declare (a
   * producer-only service sending to workers elsewhere). Untyped: prefer
   * `actor.message()` when the actor is declared here.
   *
   * @example
   * const message = broker.message('send_email', ['ada@example.com', 'Welcome'], { queue: 'emails' })
   * await broker.enqueue(message)
   *
   * @example
   * // A caller-chosen id (a UUID): sending it again stores it once.
   * const again = broker.message('send_email', ['ada@example.com'], { id: '0193c0de-6f2a-8b3c-9d1e-0a1b2c3d4e5f' })
   */
  message<Args extends unknown[] = unknown[], Result = unknown>(
    actor: string,
    args: Args,
    options: {
      /** The message id, a UUID. Default: a new UUID version 7. */
      readonly id?: string
      readonly queue?: string
      readonly priority?: number
      readonly options?: Readonly<Record<string, unknown>>
    } = {},
  ): Message<Args, Result> {
    assertName('actor', actor)
    if (options.id !== undefined)
      checkUuid('id', options.id, { where: `for a message to ${actor}` })
    const declared = this.#core.actors.get(actor)
    const queue = options.queue ?? declared?.queue ?? 'default'
    const message = this.#build(
      actor,
      queue,
      args,
      options.priority ?? declared?.options.priority ?? 0,
      options.options ?? {},
    ) as Message<Args, Result>
    return options.id === undefined ? message : message.with({ id: options.id.toLowerCase() })
  }

  #build(
    actor: string,
    queue: string,
    args: readonly unknown[],
    priority: number,
    options: Readonly<Record<string, unknown>>,
  ): Message {
    assertName('queue', queue)
    checkMessage(actor, args, priority, options)
    let built = options
    for (const plugin of this.#core.plugins) {
      if (!plugin.messageOptions) continue
      const added = plugin.messageOptions({
        actorName: actor,
        actor: this.#core.actors.get(actor),
        queue,
        args,
        options: built,
      })
      if (added) built = { ...built, ...added }
    }
    return Message.bind(new Message(uuid7(), actor, queue, args, priority, built), this.#core.host)
  }

  /**
   * Sends one message, built by `actor.message()` or `broker.message()`.
   * One statement, one round trip (two in a transaction with a deduplication key).
   *
   * @example
   * await broker.enqueue(add.message(1, 2), { delayMs: 60_000 })
   */
  async enqueue<M extends Message>(message: M, options: SendOptions = {}): Promise<M> {
    if (!(message instanceof Message)) {
      throw labelledRefusal(
        'message',
        message,
        'a Message from actor.message() or broker.message()',
      )
    }
    const entry = prepareEntry(
      message,
      options,
      this.#core.maxPayloadBytes,
      `send to ${message.actor}`,
    )
    const [stored] = await enqueueEntries(this.#core, [entry], options.transaction)
    return stored as M
  }

  /**
   * Sends up to 1,000 messages atomically, each with its own options, in one
   * statement (plus the deduplication claims, in one transaction, when some
   * entries have keys). Returns the messages in input order; a duplicate is
   * replaced by its original. One bad entry writes nothing; an empty batch
   * does no SQL.
   *
   * @example
   * const sent = await broker.enqueueMany([
   *   add.message(1, 2),
   *   { message: add.message(3, 4), delayMs: 1_000 },
   *   { message: report.message('daily'), dedupKey: 'report:daily', dedupTtlMs: 3_600_000 },
   * ])
   */
  async enqueueMany(
    entries: readonly (Message | EnqueueEntry)[],
    options: EnqueueManyOptions = {},
  ): Promise<Message[]> {
    if (!Array.isArray(entries))
      throw labelledRefusal('entries', entries, 'an array of messages', 'batch')
    if (entries.length > MAX_BATCH) {
      throw refuseOption(`Invalid batch of ${entries.length} messages: the limit is ${MAX_BATCH}`, {
        option: 'entries',
        value: entries,
        expected: `at most ${MAX_BATCH} messages`,
      })
    }
    const prepared = entries.map((item, index) => {
      const entry: EnqueueEntry = item instanceof Message ? { message: item } : item
      if (!(entry?.message instanceof Message)) {
        throw labelledRefusal(
          `entries[${index}]`,
          item,
          'a Message or { message, ...options }',
          `batch entry ${index}`,
        )
      }
      const { message, ...sendOptions } = entry
      return prepareEntry(
        message,
        sendOptions,
        this.#core.maxPayloadBytes,
        `batch entry ${index} (${message.actor})`,
      )
    })
    return enqueueEntries(this.#core, prepared, options.transaction)
  }

  /**
   * Applies core's migrations and every plugin's, under an advisory lock, so
   * many processes may call it at start. Running it again changes nothing.
   *
   * @example
   * await broker.migrate()
   */
  async migrate(
    options: { onMigration?: (m: { owner: string; version: number; name: string }) => void } = {},
  ): Promise<MigrateResult> {
    this.#core.assertOpen()
    return migrate(this.#core.executor, {
      namespace: this.#core.ns,
      owners: this.migrationSets(),
      ...(options.onMigration ? { onMigration: options.onMigration } : {}),
    })
  }

  /** Core's migrations followed by each plugin's, as `migrate` and `generateInitSql` take them. */
  migrationSets(): MigrationSet[] {
    return [
      coreMigrations,
      ...this.#core.plugins.flatMap((plugin) =>
        plugin.migrations?.length ? [{ owner: plugin.name, migrations: plugin.migrations }] : [],
      ),
    ]
  }

  /**
   * Creates a worker for some queues (default: every queue of the actors
   * declared when it starts). Call `start()` to run it.
   *
   * @example
   * const worker = broker.worker({ queues: ['emails'], concurrency: 16 })
   * await worker.start()
   * worker.stopOnSignals()
   */
  worker(options: WorkerOptions = {}): Worker {
    this.#core.assertOpen()
    const worker = createWorker(
      this.#core,
      options,
      () => this.#workers.delete(worker),
      () => this.close(),
    )
    this.#workers.add(worker)
    return worker
  }

  /**
   * Deletes finished messages (done, rejected, cancelled) last changed before
   * `olderThanMs` (default 30 days) and expired deduplication keys, in
   * bounded batches. Workers do this hourly on their own.
   *
   * @example
   * const { messages } = await broker.purge({ olderThanMs: 7 * 24 * 3600 * 1000 })
   */
  purge(options: PurgeOptions = {}): Promise<PurgeResult> {
    this.#core.assertOpen()
    return purge(this.#core, options)
  }

  /**
   * Puts back in the queue every message held by a worker that stopped
   * heartbeating (default: for 6 seconds), keeping its retry budget.
   * Workers already do this for each other every few seconds.
   *
   * @example
   * const recovered = await broker.recover()
   */
  recover(options: RecoverOptions = {}): Promise<number> {
    this.#core.assertOpen()
    return recover(this.#core, options)
  }

  /**
   * Deletes every queued message of a queue (or of all queues). Running
   * messages are left alone.
   *
   * @example
   * await broker.flush({ queue: 'emails' })
   */
  flush(options: FlushOptions = {}): Promise<number> {
    this.#core.assertOpen()
    return flush(this.#core, options)
  }

  /**
   * Waits until the queues hold no queued or consumed messages (delayed ones
   * included), for tests and scripts.
   *
   * @example
   * await add.send(1, 2)
   * await broker.join({ queues: ['default'], timeoutMs: 10_000 })
   */
  join(options: JoinOptions = {}): Promise<void> {
    this.#core.assertOpen()
    return join(this.#core, options)
  }

  /**
   * Pauses a queue, persistently (it stays paused across restarts until
   * resumed). Producers keep sending; workers start nothing more from it and
   * hand back the messages they prefetched, eta and retry budget intact;
   * handlers already running finish. Resolves once every live worker of the
   * queue has confirmed (or after `timeoutMs`), so nothing starts after it.
   *
   * @example
   * await broker.pause('emails')
   * // ... maintenance of the mail server ...
   * await broker.resume('emails')
   */
  pause(queue: string, options: PauseOptions = {}): Promise<PauseResult> {
    this.#core.assertOpen()
    return pause(this.#core, queue, options)
  }

  /**
   * Resumes a paused queue and wakes its workers at once. Resuming a queue
   * that is not paused does nothing.
   *
   * @example
   * await broker.resume('emails')
   */
  resume(queue: string): Promise<void> {
    this.#core.assertOpen()
    return resume(this.#core, queue)
  }

  /**
   * True when the queue is paused.
   *
   * @example
   * if (await broker.isPaused('emails')) console.log('emails are on hold')
   */
  async isPaused(queue: string): Promise<boolean> {
    this.#core.assertOpen()
    assertQueueName(queue)
    return (await pausedQueues(this.#core, [queue])).length > 0
  }

  /**
   * Every paused queue of the namespace.
   *
   * @example
   * console.log(await broker.pausedQueues()) // ['emails']
   */
  pausedQueues(): Promise<string[]> {
    this.#core.assertOpen()
    return pausedQueues(this.#core)
  }

  /**
   * Cancels a message. A queued, delayed or prefetched message never runs
   * (`cancelled`); a running one gets its handler's signal aborted with
   * `MessageCancelled` (`requested`: a cooperative handler may still return
   * normally); a finished one is left alone (`terminal`). Nothing revives a
   * cancelled message: no retry, recovery or re-send of its id. Calling it
   * again is harmless.
   *
   * @example
   * const { status } = await broker.cancel(message.id)
   */
  cancel(id: string, options: CancelOptions = {}): Promise<CancelResult> {
    this.#core.assertOpen()
    return cancel(this.#core, id, options)
  }

  /**
   * A message's state and whether its cancellation was requested.
   *
   * @example
   * const { state, requested } = await broker.cancellationStatus(message.id)
   */
  cancellationStatus(id: string): Promise<CancellationStatus> {
    this.#core.assertOpen()
    return cancellationStatus(this.#core, id)
  }

  /**
   * Lists rejected messages, in UUID order, a page at a time: pass a page's
   * `nextAfter` as `after` (with the same filters) for the next one. Pages
   * hold 50 messages by default, at most 1,000. Items carry the failure
   * (type, text, time, attempt) but no arguments, options or stack. A
   * message rejected during a scan may sort before the cursor: a fresh scan
   * finds it.
   *
   * @example
   * let after: string | undefined
   * do {
   *   const page = await broker.listFailed({ queue: 'emails', after })
   *   for (const item of page.items) console.log(item.id, item.failure?.type)
   *   after = page.nextAfter ?? undefined
   * } while (after)
   */
  listFailed(options: ListFailedOptions = {}): Promise<ListFailedResult> {
    this.#core.assertOpen()
    return listFailed(this.#core, options)
  }

  /**
   * One rejected message, or undefined when it is missing or not rejected.
   * Its arguments, options and stack trace are included only with
   * `{ payload: true }`, as they may hold application data.
   *
   * @example
   * const failed = await broker.showFailed(id, { payload: true })
   * if (failed) console.log(failed.failure?.stack, failed.args)
   */
  showFailed(id: string, options: ShowFailedOptions = {}): Promise<FailedMessage | undefined> {
    this.#core.assertOpen()
    return showFailed(this.#core, id, options)
  }

  /**
   * Puts a rejected message back in its queue now, atomically: same id,
   * actor, arguments, options and priority; retries, failure, progress and
   * eta reset. Plugins clear what they kept of the old run (the results
   * plugin, the old result) in the same transaction. Concurrent calls have
   * one winner. `busy` means a worker is still recording the rejection: try
   * again. Retrying does not undo side effects of the failed attempts.
   *
   * With a filter instead of an id, retries every rejected message that
   * matches (`queue`, `actor`, `failedBefore`, `errorType`; none: all), in
   * batches of `batchSize` (default 1,000), each its own short transaction
   * that skips rows another call holds, so every message is retried by one
   * call and at most once by it. Only messages rejected when the call
   * starts are retried. Returns how many; `dryRun` only counts.
   *
   * @example
   * const { status } = await broker.retryFailed(id) // 'retried' | 'missing' | 'not-rejected' | 'busy'
   *
   * const { retried: wouldRetry } = await broker.retryFailed({ queue: 'emails', dryRun: true })
   * const { retried } = await broker.retryFailed({ queue: 'emails', errorType: 'SmtpTimeout' })
   */
  retryFailed(id: string): Promise<RetryFailedResult>
  retryFailed(filter: RetryManyOptions): Promise<RetryManyResult>
  retryFailed(target: string | RetryManyOptions): Promise<RetryFailedResult | RetryManyResult> {
    this.#core.assertOpen()
    if (typeof target === 'object' && target !== null) return retryMany(this.#core, target)
    return retryFailed(this.#core, target)
  }

  /**
   * Cancels every queued or running message that matches (`queue`, `actor`,
   * `state`; none: all of the namespace) and was enqueued when the call
   * starts, in batches of `batchSize` (default 1,000), each one short
   * statement. Queued messages become `cancelled`; claimed ones are flagged
   * and their workers told, as `cancel()` does for one (`requested`). It
   * does not wait for workers' answers. `dryRun` only counts.
   *
   * @example
   * const { cancelled, requested } = await broker.cancelMany({ queue: 'reports' })
   */
  cancelMany(options: CancelManyOptions = {}): Promise<CancelManyResult> {
    this.#core.assertOpen()
    return cancelMany(this.#core, options)
  }

  /**
   * Deletes finished (done, rejected, cancelled) messages that match
   * (`queue`, `actor`, `state`, `finishedBefore`; none: all of the
   * namespace), in batches of `batchSize` (default 1,000), each one short
   * statement. Queued and running messages are never deleted. `dryRun`
   * only counts.
   *
   * @example
   * const { deleted } = await broker.deleteMessages({ queue: 'emails', state: 'rejected' })
   */
  deleteMessages(options: DeleteMessagesOptions = {}): Promise<DeleteMessagesResult> {
    this.#core.assertOpen()
    return deleteMessages(this.#core, options)
  }

  /**
   * One message in any state: state, attempts, retries, progress, last
   * failure and timestamps; undefined when missing. Arguments, options and
   * the failure's stack only with `{ payload: true }`.
   *
   * @example
   * const info = await broker.getMessage(message.id)
   * console.log(info?.state, info?.attempts, info?.progress)
   */
  getMessage(id: string, options: GetMessageOptions = {}): Promise<MessageInfo | undefined> {
    this.#core.assertOpen()
    return getMessage(this.#core, id, options)
  }

  /**
   * Changes when a queued message may start (`eta`, or `delayMs` from now)
   * and its priority. A message a worker holds, or that finished, is left
   * alone (`not-queued`); `missing` when there is no such message.
   *
   * @example
   * const { status } = await broker.reschedule(id, { delayMs: 60_000, priority: -1 })
   */
  reschedule(id: string, options: RescheduleOptions): Promise<RescheduleResult> {
    this.#core.assertOpen()
    return reschedule(this.#core, id, options)
  }

  /**
   * Makes a delayed message ready now (`promoted`) and wakes its workers;
   * `ready` when it was already due, `not-queued` when a worker holds it or
   * it finished, `missing` when there is no such message.
   *
   * @example
   * const { status } = await broker.runNow(id) // 'promoted'
   */
  runNow(id: string): Promise<RescheduleResult> {
    this.#core.assertOpen()
    return runNow(this.#core, id)
  }

  /**
   * Chains messages: each step runs after the previous one succeeded, with
   * its result appended to the step's arguments. `run()` sends the first
   * step; a step that fails for good stops the pipeline. From 1 to 1,000
   * steps.
   *
   * @example
   * const pipeline = await broker.pipeline([add.message(1, 2), multiply.message(10)]).run()
   * // add(1, 2) = 3, then multiply(10, 3)
   * const product = await pipeline.result() // 30, with @iddqueue/results
   */
  pipeline<const M extends readonly Message[]>(messages: M): Pipeline<LastResult<M>> {
    return new Pipeline<LastResult<M>>(this.#compositionHost(), messages)
  }

  /**
   * Groups messages that run independently: `run()` sends them all
   * atomically, `results()` returns their results in submission order, and
   * `completedCount()` counts the finished ones. Up to 1,000 messages.
   *
   * @example
   * const group = await broker.group([add.message(1, 2), add.message(3, 4)]).run()
   * const [a, b] = await group.results() // [3, 7], with @iddqueue/results
   */
  group<const M extends readonly Message[]>(messages: M): Group<M> {
    return new Group<M>(this.#compositionHost(), messages)
  }

  #compositionHost(): CompositionHost {
    return {
      enqueue: (message, options) => this.enqueue(message, options),
      enqueueMany: (entries, options) => this.enqueueMany(entries, options),
      countDone: (ids) => {
        this.#core.assertOpen()
        return completedCount(this.#core, ids)
      },
    }
  }

  /**
   * Runs every plugin's setup now (every operation does it first, on
   * demand). Call it in a script that only uses a plugin's own methods, such
   * as `attemptHistory().listAttempts()`, before anything else has run.
   *
   * @example
   * const history = attemptHistory()
   * const broker = createBroker({ url, plugins: [history] })
   * await broker.ready()
   * const page = await history.listAttempts(messageId)
   */
  ready(): Promise<void> {
    this.#core.assertOpen()
    return this.#ready()
  }

  /**
   * Listens to a broker event. Returns a function that stops listening.
   *
   * @example
   * const off = broker.on('message:completed', ({ message, durationMs }) => log(message.actor, durationMs))
   */
  on<E extends BrokerEventName>(event: E, listener: BrokerEventListener<E>): () => void {
    return this.#core.events.on(event, listener)
  }

  /**
   * Stops every worker of this broker gracefully, runs plugin teardowns, and
   * closes the pool if the broker opened it (a caller's pool stays open).
   *
   * @example
   * process.on('SIGTERM', () => broker.close())
   */
  async close(): Promise<void> {
    if (this.#closed) return
    await Promise.all([...this.#workers].map((worker) => worker.stop()))
    this.#closed = true
    for (const teardown of this.#teardowns.reverse()) {
      await Promise.resolve(teardown()).catch((error: unknown) =>
        this.#core.logger.error('plugin teardown failed', { error }),
      )
    }
    await this.#close()
  }

  #ready(): Promise<void> {
    // A setup that failed is tried again by the next operation instead of failing them all.
    this.#setup ??= (async () => {
      for (const plugin of this.#core.plugins) {
        const teardown = await plugin.setup?.({
          broker: this,
          namespace: this.#core.ns,
          executor: this.#core.executor,
          logger: this.#core.logger,
          subscribe: (channel, handler) => this.#core.listener.subscribe(channel, handler),
          listening: this.#core.listener.available,
          provideResults: (reader) => {
            this.#resultReader = reader
          },
          enqueueMany: (entries, options) => this.enqueueMany(entries, options),
          on: (event, listener) => this.#core.events.on(event, listener),
        })
        if (teardown) this.#teardowns.push(teardown)
      }
    })().catch(async (error: unknown) => {
      // Undo the plugins that did set up, so the retry starts clean.
      for (const teardown of this.#teardowns.splice(0).reverse())
        await Promise.resolve(teardown()).catch(() => {})
      this.#setup = undefined
      throw error
    })
    return this.#setup
  }

  async #readResult(message: Message, options: ResultOptions): Promise<unknown> {
    await this.#ready()
    if (!this.#resultReader) {
      throw new IddqueueError(
        'message.result() needs the results plugin: createBroker({ plugins: [results()] }) from @iddqueue/results',
      )
    }
    return this.#resultReader(message, options)
  }
}

/**
 * Creates a broker. Nothing connects until the first operation.
 *
 * @example
 * import { createBroker } from '@iddqueue/core'
 *
 * const broker = createBroker({ url: process.env.DATABASE_URL })
 * await broker.migrate()
 * const add = broker.actor('add', (a: number, b: number) => a + b)
 * await add.send(1, 2)
 * const worker = broker.worker({ concurrency: 8 })
 * await worker.start()
 */
export function createBroker(options: BrokerOptions): Broker {
  checkObject('options', options, 'broker options')
  return new Broker(options)
}
