import type { Broker, IddqueuePlugin } from '@iddqueue/core'

/**
 * What a request asks the dashboard to do, passed to `authorize` before
 * anything changes. `payload` is asked before a message's arguments,
 * options, stack or result are shown, even in read-only mode.
 *
 * @example
 * const authorize = (request: Request, action: DashboardAction) =>
 *   action.kind === 'payload' ? isAdmin(request) : isOperator(request)
 */
export type DashboardAction =
  | { readonly kind: 'pause' | 'resume'; readonly queue: string }
  | { readonly kind: 'retry' | 'cancel' | 'payload'; readonly id: string }
  | { readonly kind: 'retry-selected' | 'cancel-selected'; readonly ids: readonly string[] }
  | {
      readonly kind: 'retry-matching' | 'cancel-matching'
      /** Core's bulk filter: queue, actor and, for cancel, `queued` or `consumed`. */
      readonly filter: {
        readonly queue?: string
        readonly actor?: string
        readonly state?: 'queued' | 'consumed'
      }
    }
  | { readonly kind: 'schedule-enable' | 'schedule-disable'; readonly name: string }

/**
 * One mutation the dashboard carried out (or refused), for an audit log.
 *
 * @example
 * const onAudit = (event: DashboardAuditEvent) =>
 *   auditLog.write({ at: event.at, who: event.user, what: event.action, outcome: event.outcome })
 */
export interface DashboardAuditEvent {
  readonly at: Date
  readonly action: DashboardAction
  /** `done` with what the operation answered, or why nothing changed. */
  readonly outcome: 'done' | 'refused' | 'failed'
  readonly result?: unknown
  /** Whatever `identify(request)` returned, if given. */
  readonly user?: string
  /** The client's address as the request's `x-forwarded-for` says, when present. */
  readonly forwardedFor?: string
}

/**
 * Options of {@link createDashboard}: a broker (the caller owns it) or a URL
 * (the dashboard opens and closes its own broker).
 *
 * @example
 * const dashboard = createDashboard({
 *   broker,
 *   basePath: '/admin/queues',
 *   readOnly: false,
 *   authorize: (request, action) => request.headers.get('x-role') === 'ops',
 *   redact: (args) => args.map(() => '…'),
 * })
 */
export type DashboardOptions = (
  | { readonly broker: Broker; readonly url?: never }
  | {
      readonly url: string
      readonly broker?: never
      /**
       * Plugins of the broker the dashboard opens (it always adds
       * `attemptHistory()`): `scheduler()` shows the schedules.
       */
      readonly plugins?: readonly IddqueuePlugin[]
    }
) & {
  /** Where the dashboard is mounted, such as `/admin/queues`. Default `''` (the root). */
  readonly basePath?: string
  /** Refuse every mutation (the buttons are not shown). Default true: opt in to actions. */
  readonly readOnly?: boolean
  /**
   * Decides each action (every mutation, and showing a payload). Default:
   * allow all (the dashboard's own CSRF protection and `readOnly` still apply).
   */
  readonly authorize?: (request: Request, action: DashboardAction) => boolean | Promise<boolean>
  /** Turns a payload (arguments, options, result) into what may be shown. Default: shown as stored. */
  readonly redact?: (
    value: unknown,
    context: {
      readonly id: string
      readonly actor: string
      readonly field: 'args' | 'options' | 'result'
    },
  ) => unknown
  /** Receives an event for each mutation. Default: the broker's logger at info level. */
  readonly onAudit?: (event: DashboardAuditEvent) => void
  /** Names the user of a request for audit events. */
  readonly identify?: (request: Request) => string | undefined | Promise<string | undefined>
  /** How often the one shared poll refreshes live views, in ms (min 250). Default 2,000. */
  readonly pollIntervalMs?: number
  /** Statement timeout of a JSON containment (`args @> …`) search, in ms. Default 2,000. */
  readonly searchTimeoutMs?: number
  /**
   * Messages per batch of a bulk action over everything matching a filter
   * (core's `batchSize`, 1 to 10,000): each batch is one short transaction,
   * and the operation's page shows the running totals after each. Default
   * core's 1,000.
   */
  readonly bulkBatchSize?: number
}
