import type { Broker as BrokerInstance } from './broker/broker.js'
import type { Worker as WorkerInstance } from './worker/worker.js'

export type { Actor, MessageWithOptions, SendWithOptions } from './actor/actor.js'
export type {
  ActorArgs,
  ActorContext,
  ActorResult,
  ContextRule,
  Handler,
  StepArgs,
} from './actor/actor-context.js'
export type { ActorDefinition } from './actor/actor-definition.js'
export {
  ACTOR_DEFAULTS,
  type ActorOptions,
  type ActorReference,
  type ErrorClass,
  type ResolvedActorOptions,
} from './actor/actor-options.js'
export { assertQueueName } from './actor/names.js'
export type { TransactionalContext } from './actor/transactional-context.js'
export { createBroker } from './broker/broker.js'
export type { BrokerOptions } from './broker/broker-options.js'
export { Group, type GroupResults } from './composition/group.js'
export { type LastResult, MAX_COMPOSITION, Pipeline } from './composition/pipeline.js'
export type { RunOptions } from './composition/run-options.js'
export {
  type DedupMode,
  type EnqueueEntry,
  type EnqueueManyOptions,
  type EnqueueOptions,
  MAX_BATCH,
  type SendOptions,
} from './enqueue/enqueue-options.js'
export {
  AgeLimitExceeded,
  BrokerClosedError,
  BrokerConnectionError,
  IddqueueError,
  InvalidIdentifierError,
  InvalidOptionError,
  InvalidPayloadError,
  InvalidStateError,
  MessageCancelled,
  PayloadTooLargeError,
  Retry,
  type RetryOptions,
  SchemaNotReadyError,
  TimeLimitExceeded,
  TransactionalActorError,
  UnknownActorError,
  WorkerShutdown,
} from './errors.js'
export { attemptHistory } from './history/attempt-history.js'
export type {
  AttemptHistoryPlugin,
  AttemptRecord,
  AttemptStatus,
  ListAttemptsOptions,
  ListAttemptsResult,
  PurgeAttemptsOptions,
} from './history/attempt-record.js'
export { type EncodedMessage, Message, type ResultOptions } from './message/message.js'
export {
  DEFAULT_MAX_PAYLOAD_BYTES,
  encodeJson,
  MAX_PAYLOAD_DEPTH,
} from './message/message-codec.js'
export { isUuid, uuid7 } from './message/uuid7.js'
export { computeBackoff } from './middleware/backoff.js'
export { currentMessage } from './middleware/current-message.js'
export {
  type BulkOptions,
  DEFAULT_BULK_BATCH,
  MAX_BULK_BATCH,
} from './ops/bulk-filter.js'
export type { CancellationStatus, CancelOptions, CancelResult } from './ops/cancel.js'
export type { CancelManyOptions, CancelManyResult } from './ops/cancel-many.js'
export type {
  DeleteMessagesOptions,
  DeleteMessagesResult,
  TerminalState,
} from './ops/delete-messages.js'
export type {
  FailedMessage,
  FailedSummary,
  FailureSummary,
  ListFailedOptions,
  ListFailedResult,
  RetryFailedResult,
  ShowFailedOptions,
} from './ops/failed.js'
export type { GetMessageOptions, MessageInfo } from './ops/get-message.js'
export { type JoinOptions, JoinTimeoutError } from './ops/join.js'
export type { FlushOptions, PurgeOptions, PurgeResult, RecoverOptions } from './ops/maintenance.js'
export type { PauseOptions, PauseResult } from './ops/pause.js'
export type { RescheduleOptions, RescheduleResult } from './ops/reschedule.js'
export type { RetryManyOptions, RetryManyResult } from './ops/retry-many.js'
export type {
  IddqueuePlugin,
  MessageBuild,
  PluginContext,
  ResultReader,
  Teardown,
} from './plugin/iddqueue-plugin.js'
export type {
  EnqueueEvent,
  Middleware,
  Outcome,
  ProcessEvent,
  ReviveEvent,
  SettledMessage,
  SettleEvent,
} from './plugin/middleware-interface.js'
export { NotificationWaiter } from './plugin/notification-waiter.js'
export type { NotificationWaitersOptions } from './plugin/notification-waiters.js'
export { NotificationWaiters } from './plugin/notification-waiters.js'
export { SetupLatch } from './plugin/setup-latch.js'
export type { BrokerEventListener, BrokerEventName, BrokerEvents } from './runtime/events.js'
export { consoleLogger, type LogFields, type Logger, type LogLevel } from './runtime/logger.js'
export { isConnectionError } from './runtime/wrap-error.js'
export type { ClaimClauses } from './sql/claim.js'
export type { SettleClauses } from './sql/settle-clauses.js'
export { MAX_PREFETCH, PREFETCH_PER_QUEUE } from './worker/prefetch.js'
export { MAX_PROGRESS_BYTES, PROGRESS_INTERVAL_MS } from './worker/progress-reporter.js'
export type { WorkerState, WorkerStats } from './worker/worker.js'
export { DEFAULT_RETENTION_MS, DEFAULT_STALE_AFTER_MS } from './worker/worker-defaults.js'
export type { WorkerOptions } from './worker/worker-options.js'

/**
 * The broker `createBroker()` returns. A type only: make one with
 * `createBroker`, check one with your own types, not `instanceof`.
 *
 * @example
 * const broker: Broker = createBroker({ url: process.env.DATABASE_URL })
 */
export interface Broker extends BrokerInstance {}

/**
 * A worker made by `broker.worker()`. A type only, like {@link Broker}.
 *
 * @example
 * const worker: Worker = broker.worker({ concurrency: 8 })
 * await worker.start()
 */
export interface Worker extends WorkerInstance {}
