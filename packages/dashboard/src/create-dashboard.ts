import {
  type AttemptHistoryPlugin,
  type AttemptRecord,
  attemptHistory,
  type Broker,
  createBroker,
  InvalidIdentifierError,
  InvalidOptionError,
  isUuid,
} from '@iddqueue/core'
import type { QueueStats } from '@iddqueue/metrics'
import type { Scheduler } from '@iddqueue/scheduler'
import { describeValue } from '@iddqueue/schema'
import { sql } from 'kysely'
import { BulkOperations } from './actions/bulk-operations.js'
import { runAction } from './actions/run-action.js'
import type { DashboardAuditEvent, DashboardOptions } from './dashboard-options.js'
import { DashboardRequest } from './dashboard-request.js'
import { DashboardData } from './data/dashboard-data.js'
import { listMessages, parseMessageFilter } from './data/list-messages.js'
import { listWorkers } from './data/list-workers.js'
import { queueLimits } from './data/queue-limits.js'
import { describeError } from './describe-error.js'
import { html, type SafeHtml } from './html/html.js'
import { layout } from './html/layout.js'
import type { PageContext } from './html/page-context.js'
import { LiveHub } from './live/live-hub.js'
import { CONTENT_SECURITY_POLICY } from './security/csrf.js'
import { STATIC_ASSETS, staticAsset } from './static-assets.js'
import { failedView } from './views/failed-view.js'
import { type MessageDetail, messageView } from './views/message-view.js'
import { messagesView } from './views/messages-view.js'
import { operationView } from './views/operation-view.js'
import { overviewView } from './views/overview-view.js'
import { queueView } from './views/queue-view.js'
import { schedulesView } from './views/schedules-view.js'
import { workersView } from './views/workers-view.js'

/**
 * A mounted dashboard: a standard `(Request) => Promise<Response>` handler,
 * plus `close()`, which ends its live streams, waits for its running bulk
 * operations (and closes the broker it opened from a `url`; a broker you
 * passed stays yours).
 *
 * @example
 * const dashboard: Dashboard = createDashboard({ broker, basePath: '/queues' })
 * const response = await dashboard(new Request('http://localhost/queues/'))
 * await dashboard.close()
 */
export type Dashboard = ((request: Request) => Promise<Response>) & {
  /** The normalised mount point ('' for the root, else '/like/this'). */
  readonly basePath: string
  close(): Promise<void>
}

/** @internal Resolved options, shared by the routes. */
export interface DashboardRuntime {
  readonly broker: Broker
  readonly data: DashboardData
  readonly hub: LiveHub
  readonly base: string
  readonly readOnly: boolean
  readonly searchTimeoutMs: number
  readonly operations: BulkOperations
  readonly bulkBatchSize: number | undefined
  authorize(
    request: Request,
    action: Parameters<NonNullable<DashboardOptions['authorize']>>[1],
  ): Promise<boolean>
  audit(
    request: Request,
    event: Omit<DashboardAuditEvent, 'at' | 'user' | 'forwardedFor'>,
  ): Promise<void>
  redact: NonNullable<DashboardOptions['redact']>
  installed(): Promise<ReadonlySet<string>>
  scheduler(): Promise<Scheduler | undefined>
}

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
}

const HISTORY_PLUGIN = '@iddqueue/core/history'
/** Where a dashboard keeps its live hub; see {@link liveHubOf}. */
const LIVE_HUB = Symbol('iddqueue.dashboard.liveHub')
const INSTALLED_TTL_MS = 30_000

/**
 * Creates the dashboard: a `(Request) => Promise<Response>` handler that
 * serves server-rendered pages (htmx, no client build, a strict CSP, readable
 * without JavaScript) for queues, messages, failed messages, workers and
 * schedules, live through Server-Sent Events fed by one shared poll and the
 * broker's LISTEN connection.
 *
 * Safe by default: read-only unless `readOnly: false`; then every mutation is
 * a POST that must pass the CSRF check (same origin, and a double-submit
 * token) and `authorize(request, action)`, and emits an audit event. Message
 * arguments are shown only when asked for, after `authorize(request, { kind:
 * 'payload' })`, and through `redact`. Every action calls the same core
 * operation the CLI calls (`retryFailed`, `cancel`, `cancelMany`, `pause`, ...).
 *
 * @example
 * import { createServer } from 'node:http'
 * import { createDashboard, toNodeHandler } from '@iddqueue/dashboard'
 *
 * const dashboard = createDashboard({ broker, basePath: '/admin/queues', readOnly: false })
 * createServer(toNodeHandler(dashboard)).listen(3000, '127.0.0.1')
 */
export function createDashboard(options: DashboardOptions): Dashboard {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('Invalid dashboard options: expected an object')
  const base = normaliseBasePath(options.basePath)
  const pollIntervalMs = positive('pollIntervalMs', options.pollIntervalMs, 2000, 250)
  const searchTimeoutMs = positive('searchTimeoutMs', options.searchTimeoutMs, 2000, 1)
  const bulkBatchSize = options.bulkBatchSize
  if (
    bulkBatchSize !== undefined &&
    (!Number.isInteger(bulkBatchSize) || bulkBatchSize < 1 || bulkBatchSize > 10_000)
  )
    throw new InvalidOptionError(
      `Invalid bulkBatchSize ${describeValue(bulkBatchSize)}: expected an integer from 1 to 10000`,
    )
  const readOnly = options.readOnly ?? true
  if (typeof readOnly !== 'boolean')
    throw new InvalidOptionError(
      `Invalid readOnly ${describeValue(readOnly)}: expected true or false`,
    )
  for (const name of ['authorize', 'redact', 'onAudit', 'identify'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function')
      throw new InvalidOptionError(`Invalid ${name}: expected a function`)
  }
  let owned = false
  let broker: Broker
  if (options.broker !== undefined) {
    if (!isBroker(options.broker))
      throw new InvalidOptionError(
        `Invalid broker ${describeValue(options.broker)}: expected a broker from createBroker()`,
      )
    broker = options.broker
  } else if (typeof options.url === 'string') {
    if (options.plugins !== undefined && !Array.isArray(options.plugins))
      throw new InvalidOptionError(
        `Invalid plugins ${describeValue(options.plugins)}: expected an array of plugins`,
      )
    broker = createBroker({
      url: options.url,
      plugins: [attemptHistory(), ...(options.plugins ?? [])],
    })
    owned = true
  } else {
    throw new InvalidOptionError('Invalid dashboard options: expected a broker or a url')
  }
  const data = new DashboardData(broker)
  const logger = broker.logger
  const hub = new LiveHub(data, pollIntervalMs, (error) =>
    logger.warn('dashboard: live poll failed', { error: describeError(error) }),
  )
  let installed: { at: number; value: Promise<ReadonlySet<string>> } | undefined
  let scheduler: Promise<Scheduler | undefined> | undefined
  const runtime: DashboardRuntime = {
    broker,
    data,
    hub,
    base,
    readOnly,
    searchTimeoutMs,
    operations: new BulkOperations(),
    bulkBatchSize,
    async authorize(request, action) {
      if (!options.authorize) return true
      return (await options.authorize(request, action)) === true
    },
    async audit(request, event) {
      const user = options.identify ? await options.identify(request) : undefined
      const forwardedFor = request.headers.get('x-forwarded-for') ?? undefined
      const full: DashboardAuditEvent = {
        at: new Date(),
        ...event,
        ...(user !== undefined ? { user } : {}),
        ...(forwardedFor !== undefined ? { forwardedFor } : {}),
      }
      if (options.onAudit) options.onAudit(full)
      else logger.info('dashboard action', { ...full, action: JSON.stringify(full.action) })
    },
    redact: options.redact ?? ((value) => value),
    installed() {
      const now = Date.now()
      if (!installed || now - installed.at > INSTALLED_TTL_MS) {
        const value = data.installed()
        installed = { at: now, value }
        value.catch(() => {
          installed = undefined
        })
      }
      return installed.value
    },
    async scheduler() {
      // createScheduler() needs the plugin in the broker, and its tables in the namespace.
      if (!broker.plugins.some((plugin) => plugin.name === '@iddqueue/scheduler')) return undefined
      if (!(await runtime.installed()).has('@iddqueue/scheduler')) return undefined
      scheduler ??= import('@iddqueue/scheduler').then(
        (module) => module.createScheduler(broker),
        () => undefined,
      )
      return scheduler
    },
  }
  // Plugins (attempt history) answer only once the broker's setup ran.
  let ready: Promise<void> | undefined
  const handler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url)
    const pathname = url.pathname
    if (base !== '' && pathname !== base && !pathname.startsWith(`${base}/`))
      return text(404, 'Not found')
    const below = pathname.slice(base.length) || '/'
    const req = new DashboardRequest(request, base, below)
    try {
      ready ??= broker.ready().catch((error: unknown) => {
        ready = undefined
        throw error
      })
      await ready
      return await route(runtime, req)
    } catch (error) {
      if (InvalidOptionError.isInstance(error) || InvalidIdentifierError.isInstance(error)) {
        return page(
          req,
          400,
          errorPage(req.page(readOnly), 'Bad request', (error as Error).message),
        )
      }
      logger.error('dashboard: request failed', { path: below, error: describeError(error) })
      return page(
        req,
        500,
        errorPage(req.page(readOnly), 'Error', 'The request failed; see the server log.'),
      )
    }
  }
  const dashboard: Dashboard = Object.assign(handler, {
    basePath: base,
    async close() {
      await hub.close()
      await runtime.operations.close()
      if (owned) await broker.close()
    },
  })
  Object.defineProperty(dashboard, LIVE_HUB, { value: hub })
  return dashboard
}

/**
 * @internal The live hub behind a dashboard: its open streams, its poll
 * counter and whether it polls, for the tests of the shared poll.
 */
export function liveHubOf(dashboard: Dashboard): LiveHub {
  const hub = (dashboard as unknown as { [LIVE_HUB]?: LiveHub })[LIVE_HUB]
  if (!hub) throw new InvalidOptionError('Not a dashboard made by createDashboard()')
  return hub
}

async function route(rt: DashboardRuntime, req: DashboardRequest): Promise<Response> {
  const { path } = req
  const method = req.request.method
  const parts = path.split('/').slice(1).map(decode)
  if (method === 'POST') return runAction(rt, req, parts)
  if (method !== 'GET' && method !== 'HEAD') {
    return new Response('Method not allowed', {
      status: 405,
      headers: { allow: 'GET, HEAD, POST' },
    })
  }
  const p = req.page(rt.readOnly)
  const [first, second] = parts
  if (path === '/' || path === '') {
    const [stats, paused, throughput] = await Promise.all([
      rt.hub.stats(),
      rt.broker.pausedQueues(),
      rt.hub.throughput(),
    ])
    const after = req.query.get('after') ?? undefined
    return page(
      req,
      200,
      overviewView(p, { stats, paused: new Set(paused), throughput, ...(after ? { after } : {}) }),
    )
  }
  if (first === 'static' && second !== undefined && parts.length === 2) return asset(second)
  if (first === 'events' && parts.length === 1) return events(rt, req)
  if (first === 'queues' && second !== undefined && parts.length === 2) {
    const queue = second
    const [stats, paused, throughput, messages, scheduler] = await Promise.all([
      rt.hub.stats(),
      rt.broker.isPaused(queue),
      rt.hub.throughput(),
      listMessages(rt.data, { queue }, { limit: 20, searchTimeoutMs: rt.searchTimeoutMs }),
      rt.scheduler(),
    ])
    const schedules = scheduler
      ? (await scheduler.list()).filter((s) => s.queue === queue)
      : undefined
    const limits = await queueLimits(rt.broker, queue, new Set(messages.items.map((m) => m.actor)))
    return page(
      req,
      200,
      queueView(p, {
        queue,
        stats: stats.find((s) => s.queue === queue) ?? emptyStats(queue),
        paused,
        throughput: throughput.get(queue),
        messages,
        schedules,
        limits,
      }),
    )
  }
  if (first === 'messages' && parts.length === 1) {
    const filter = parseMessageFilter(req.query)
    const before = req.query.get('before') ?? undefined
    const result = await listMessages(rt.data, filter, {
      ...(before ? { before } : {}),
      searchTimeoutMs: rt.searchTimeoutMs,
    }).catch((error: unknown) => {
      // A containment search over the statement timeout: say so, keep the form.
      if (String((error as { code?: string }).code) === '57014') return undefined
      throw error
    })
    const shown =
      result === undefined
        ? {
            ...p,
            error: `The args search took longer than ${rt.searchTimeoutMs} ms and was stopped; narrow it with a queue, actor, state or time range.`,
          }
        : p
    return page(req, 200, messagesView(shown, filter, result))
  }
  if (first === 'messages' && second !== undefined && parts.length === 2) {
    return messagePage(rt, req, p, second)
  }
  if (first === 'failed' && parts.length === 1) {
    const filter = parseMessageFilter(req.query)
    const after = req.query.get('after') ?? undefined
    const result = await rt.broker.listFailed({
      ...(filter.queue ? { queue: filter.queue } : {}),
      ...(filter.actor ? { actor: filter.actor } : {}),
      ...(after ? { after } : {}),
      limit: 50,
    })
    return page(req, 200, failedView(p, filter, result))
  }
  if (first === 'operations' && second !== undefined && parts.length === 2) {
    const operation = rt.operations.get(second)
    if (!operation)
      return page(
        req,
        404,
        errorPage(p, 'Not found', 'No such bulk operation (finished ones are kept for a while).'),
      )
    return page(req, 200, operationView(p, operation))
  }
  if (first === 'workers' && parts.length === 1) {
    const after = req.query.get('after') ?? undefined
    return page(req, 200, workersView(p, await listWorkers(rt.data, after ? { after } : {})))
  }
  if (first === 'schedules' && parts.length === 1) {
    const scheduler = await rt.scheduler()
    const after = req.query.get('after') ?? undefined
    return page(req, 200, schedulesView(p, scheduler ? await scheduler.list() : undefined, after))
  }
  return page(req, 404, errorPage(p, 'Not found', `Nothing at ${path}.`))
}

async function messagePage(
  rt: DashboardRuntime,
  req: DashboardRequest,
  p: PageContext,
  id: string,
): Promise<Response> {
  if (!isUuid(id)) return page(req, 404, errorPage(p, 'Not found', 'Not a message id.'))
  const wantsPayload = req.query.get('payload') === '1'
  const allowed = wantsPayload && (await rt.authorize(req.request, { kind: 'payload', id }))
  const info = await rt.broker.getMessage(id, { payload: allowed })
  if (!info) return page(req, 404, errorPage(p, 'Not found', `No message ${id}.`))
  const history = rt.broker.plugins.find(
    (plugin): plugin is AttemptHistoryPlugin =>
      plugin.name === HISTORY_PLUGIN &&
      typeof (plugin as AttemptHistoryPlugin).listAttempts === 'function',
  )
  const installed = await rt.installed()
  let attempts: AttemptRecord[] | undefined
  if (history) attempts = (await history.listAttempts(id, { limit: 100 })).items
  let result: MessageDetail['result']
  let resultValue: unknown
  if (installed.has('@iddqueue/results')) {
    const [row] = await rt.data.rows(
      rt.data.db
        .selectFrom('results')
        .select(['status', 'stored_at', ...(allowed ? (['value'] as const) : [])])
        .where('message_id', '=', id),
    )
    result = row ? { status: row.status, storedAt: row.stored_at, value: undefined } : null
    resultValue = (row as { value?: unknown } | undefined)?.value
  }
  // The trace id is not application data: shown without the payload, read from the options alone.
  const [traced] = await rt.data.rows(
    rt.data.db
      .selectFrom('messages')
      .select(sql<string | null>`options->'trace'->>'traceparent'`.as('traceparent'))
      .where('id', '=', id),
  )
  const context = { id, actor: info.actor }
  const detail: MessageDetail = {
    info,
    ...(traced?.traceparent ? { traceparent: traced.traceparent } : {}),
    ...(attempts ? { attempts } : {}),
    ...(result !== undefined ? { result } : {}),
    ...(allowed
      ? {
          payload: {
            args: await rt.redact(info.args, { ...context, field: 'args' }),
            options: await rt.redact(info.options, { ...context, field: 'options' }),
            ...(result
              ? { result: await rt.redact(resultValue, { ...context, field: 'result' }) }
              : {}),
          },
        }
      : {}),
  }
  const shown =
    wantsPayload && !allowed ? { ...p, error: 'You may not see this message’s payload.' } : p
  return page(req, wantsPayload && !allowed ? 403 : 200, messageView(shown, detail))
}

function events(rt: DashboardRuntime, req: DashboardRequest): Response {
  const encoder = new TextEncoder()
  let cleanup = () => {}
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true
      const send = (event: string, data: string) => {
        if (!open) return
        try {
          controller.enqueue(encoder.encode(`event: ${event}\ndata: ${data}\n\n`))
          if (event === 'close') {
            open = false
            controller.close()
          }
        } catch {
          cleanup()
        }
      }
      controller.enqueue(encoder.encode('retry: 3000\n: connected\n\n'))
      const remove = rt.hub.add(send)
      // Proxies drop silent connections: a comment every 15 s keeps it open.
      const ping = setInterval(() => {
        if (!open) return
        try {
          controller.enqueue(encoder.encode(': ping\n\n'))
        } catch {
          cleanup()
        }
      }, 15_000)
      cleanup = () => {
        open = false
        clearInterval(ping)
        remove()
      }
      req.request.signal.addEventListener('abort', () => {
        cleanup()
        try {
          controller.close()
        } catch {}
      })
    },
    cancel() {
      cleanup()
    },
  })
  return new Response(stream, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    },
  })
}

async function asset(name: string): Promise<Response> {
  const type = STATIC_ASSETS[name]
  if (!type) return text(404, 'Not found')
  return new Response(await staticAsset(name), {
    headers: {
      'content-type': type,
      'cache-control': 'public, max-age=300',
      'x-content-type-options': 'nosniff',
    },
  })
}

/** @internal An HTML response with the security headers (and the CSRF cookie if new). */
export function page(req: DashboardRequest, status: number, body: SafeHtml): Response {
  return new Response(body.value, { status, headers: req.headers(PAGE_HEADERS) })
}

/** @internal A page saying what went wrong. */
export function errorPage(p: PageContext, title: string, message: string): SafeHtml {
  return layout(
    p,
    { title, nav: 'none' },
    html`<h1>${title}</h1><p class="error" role="alert">${message}</p>`,
  )
}

function text(status: number, body: string): Response {
  return new Response(body, {
    status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' },
  })
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

function normaliseBasePath(value: unknown): string {
  if (value === undefined || value === '' || value === '/') return ''
  if (typeof value !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+\/?$/.test(value))
    throw new InvalidOptionError(
      `Invalid basePath ${describeValue(value)}: expected a path such as /admin/queues`,
    )
  return value.replace(/\/$/, '')
}

/**
 * The longest delay a Node timer keeps (past it, `setTimeout` fires after
 * 1 ms) and the longest `statement_timeout` PostgreSQL takes.
 */
const MAX_MS = 2_147_483_647

function positive(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MAX_MS)
    throw new InvalidOptionError(
      `Invalid ${name} ${describeValue(value)}: expected a number from ${min} to ${MAX_MS}`,
    )
  return value
}

function emptyStats(queue: string): QueueStats {
  return {
    queue,
    queued: 0,
    consumed: 0,
    done: 0,
    rejected: 0,
    cancelled: 0,
    ready: 0,
    scheduled: 0,
    oldestReadyMs: 0,
    doneLastMinute: 0,
    doneLastHour: 0,
  }
}

/** What the dashboard uses of a broker: its pool, namespace, logger and operations. */
function isBroker(value: unknown): value is Broker {
  const candidate = value as Partial<Broker> | null
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.worker === 'function' &&
    typeof candidate.logger?.warn === 'function' &&
    typeof candidate.namespace === 'object' &&
    typeof candidate.executor === 'object'
  )
}
