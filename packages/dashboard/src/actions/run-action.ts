import { assertQueueName, InvalidOptionError, isUuid } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import type { DashboardRuntime } from '../create-dashboard.js'
import { errorPage, page } from '../create-dashboard.js'
import type { DashboardAction } from '../dashboard-options.js'
import type { DashboardRequest } from '../dashboard-request.js'
import { parseMessageFilter } from '../data/list-messages.js'
import { describeError } from '../describe-error.js'
import { CSRF_FIELD, csrfRefusal } from '../security/csrf.js'
import { matchingScope } from '../views/messages-view.js'
import type { BulkOperation, MatchingAction } from './bulk-operations.js'

/** @internal The most messages one "selected" bulk action takes (the page size is 50). */
export const MAX_SELECTED = 500

/**
 * @internal Every mutation: POST only, refused in read-only mode, then the
 * CSRF check, then `authorize`, then the core operation, each outcome
 * audited; answers with a redirect back (303) carrying a notice, so a form
 * without JavaScript and an htmx-boosted one behave alike. A bulk action
 * over everything matching runs in the background instead: the redirect
 * goes to its progress page (`/operations/<id>`), and it is audited when
 * it ends.
 */
export async function runAction(
  rt: DashboardRuntime,
  req: DashboardRequest,
  parts: readonly string[],
): Promise<Response> {
  const p = req.page(rt.readOnly)
  if (rt.readOnly)
    return page(
      req,
      403,
      errorPage(p, 'Read-only', 'This dashboard is read-only: it changes nothing.'),
    )
  const form = await readForm(req.request)
  const token = form.get(CSRF_FIELD) ?? undefined
  const refusal = csrfRefusal(req.request, token)
  if (refusal)
    return page(
      req,
      403,
      errorPage(p, 'Forbidden', `Refused: ${refusal}. Reload the page and try again.`),
    )
  const action = parseAction(parts, form)
  if (!action) return page(req, 404, errorPage(p, 'Not found', `No action at ${req.path}.`))
  const back = returnPath(form.get('return'), action)
  if (!(await rt.authorize(req.request, action))) {
    await rt.audit(req.request, { action, outcome: 'refused' })
    return page(req, 403, errorPage(p, 'Forbidden', 'You may not do this.'))
  }
  if (action.kind === 'retry-matching' || action.kind === 'cancel-matching') {
    const operation = startMatching(rt, req.request, action, back)
    return redirect(req, `/operations/${operation.id}`, describeStart(action))
  }
  let result: unknown
  try {
    result = await perform(rt, action)
  } catch (error) {
    await rt.audit(req.request, { action, outcome: 'failed', result: describeError(error) })
    throw error
  }
  await rt.audit(req.request, { action, outcome: 'done', result })
  return redirect(req, back, describe(action, result))
}

function parseAction(parts: readonly string[], form: URLSearchParams): DashboardAction | undefined {
  const [first, second, third] = parts
  if (parts.length === 3 && first === 'queues' && second !== undefined) {
    if (third === 'pause' || third === 'resume') {
      assertQueueName(second)
      return { kind: third, queue: second }
    }
  }
  if (parts.length === 3 && first === 'messages' && second !== undefined) {
    if (third === 'retry' || third === 'cancel') {
      if (!isUuid(second))
        throw new InvalidOptionError(`Invalid message id ${describeValue(second)}: expected a UUID`)
      return { kind: third, id: second }
    }
  }
  if (parts.length === 2 && first === 'messages' && second === 'bulk') {
    const op = form.get('op')
    if (op === 'retry-selected' || op === 'cancel-selected') {
      const ids = form.getAll('ids')
      if (ids.length === 0)
        throw new InvalidOptionError('Nothing selected: tick the messages to act on')
      if (ids.length > MAX_SELECTED)
        throw new InvalidOptionError(
          `Too many messages selected: ${ids.length}, at most ${MAX_SELECTED}`,
        )
      for (const id of ids)
        if (!isUuid(id))
          throw new InvalidOptionError(`Invalid message id ${describeValue(id)}: expected a UUID`)
      return { kind: op, ids }
    }
    if (op === 'retry-matching' || op === 'cancel-matching') {
      const filter = parseMessageFilter(form)
      const scope = matchingScope(filter)
      if (op === 'retry-matching' ? !scope.retry : !scope.cancel) {
        throw new InvalidOptionError(
          op === 'retry-matching'
            ? 'Retry all matching needs the filter state=rejected, without a time range or args search'
            : 'Cancel all matching needs the filter state=queued or consumed, without a time range or args search',
        )
      }
      return {
        kind: op,
        filter: {
          ...(filter.queue ? { queue: filter.queue } : {}),
          ...(filter.actor ? { actor: filter.actor } : {}),
          ...(op === 'cancel-matching' ? { state: filter.state as 'queued' | 'consumed' } : {}),
        },
      }
    }
    throw new InvalidOptionError(
      `Invalid op ${describeValue(op)}: expected retry-selected, cancel-selected, retry-matching or cancel-matching`,
    )
  }
  if (parts.length === 3 && first === 'schedules' && second !== undefined) {
    if (third === 'enable' || third === 'disable')
      return { kind: `schedule-${third}`, name: second }
  }
  return undefined
}

/**
 * Runs a bulk action over everything matching in the background, batch by
 * batch (core's `retryFailed` / `cancelMany` with `onProgress`), and audits
 * it when it ends; its page shows the running totals meanwhile.
 */
function startMatching(
  rt: DashboardRuntime,
  request: Request,
  action: MatchingAction,
  back: string,
): BulkOperation {
  const { broker } = rt
  const filter = {
    ...(action.filter.queue ? { queue: action.filter.queue } : {}),
    ...(action.filter.actor ? { actor: action.filter.actor } : {}),
  }
  const batch = rt.bulkBatchSize !== undefined ? { batchSize: rt.bulkBatchSize } : {}
  const retry = action.kind === 'retry-matching'
  const state = action.filter.state
  return rt.operations.start(action, back, {
    async count() {
      if (retry) return (await broker.retryFailed({ ...filter, dryRun: true })).retried
      const would = await broker.cancelMany({
        ...filter,
        ...(state ? { state } : {}),
        dryRun: true,
      })
      return would.cancelled + would.requested
    },
    run(onProgress) {
      return retry
        ? broker.retryFailed({ ...filter, ...batch, onProgress })
        : broker.cancelMany({ ...filter, ...(state ? { state } : {}), ...batch, onProgress })
    },
    async onEnd(operation) {
      await rt.audit(request, {
        action,
        outcome: operation.state === 'done' ? 'done' : 'failed',
        result: operation.state === 'done' ? operation.progress : operation.error,
      })
    },
  })
}

function describeStart(action: MatchingAction): string {
  const what = action.kind === 'retry-matching' ? 'Retrying' : 'Cancelling'
  const scope = [
    action.filter.queue ? `queue ${action.filter.queue}` : undefined,
    action.filter.actor ? `actor ${action.filter.actor}` : undefined,
    action.filter.state ? `state ${action.filter.state}` : undefined,
  ].filter(Boolean)
  return `${what} every message matching ${scope.length > 0 ? scope.join(', ') : 'the filter'}, in batches.`
}

/** Calls the core (or scheduler) operation the CLI calls for the same thing. */
async function perform(rt: DashboardRuntime, action: DashboardAction): Promise<unknown> {
  const { broker } = rt
  switch (action.kind) {
    case 'pause':
      return broker.pause(action.queue, { timeoutMs: 2000 })
    case 'resume':
      await broker.resume(action.queue)
      return { resumed: action.queue }
    case 'retry':
      return broker.retryFailed(action.id)
    case 'cancel':
      return broker.cancel(action.id)
    case 'retry-selected': {
      const counts: Record<string, number> = {}
      for (const id of action.ids) {
        const { status } = await broker.retryFailed(id)
        counts[status] = (counts[status] ?? 0) + 1
      }
      return counts
    }
    case 'cancel-selected': {
      const counts: Record<string, number> = {}
      for (const id of action.ids) {
        const { status } = await broker.cancel(id)
        counts[status] = (counts[status] ?? 0) + 1
      }
      return counts
    }
    case 'schedule-enable':
    case 'schedule-disable': {
      const scheduler = await rt.scheduler()
      if (!scheduler)
        throw new InvalidOptionError('The scheduler is not installed in this namespace')
      if (action.kind === 'schedule-enable') await scheduler.enable(action.name)
      else await scheduler.disable(action.name)
      return { schedule: action.name }
    }
    default:
      throw new InvalidOptionError(`Unknown action ${(action as { kind: string }).kind}`)
  }
}

function describe(action: DashboardAction, result: unknown): string {
  const r = result as Record<string, unknown>
  switch (action.kind) {
    case 'pause':
      return `Queue ${action.queue} paused.`
    case 'resume':
      return `Queue ${action.queue} resumed.`
    case 'retry':
      return `Retry of ${action.id}: ${String(r.status)}.`
    case 'cancel':
      return `Cancel of ${action.id}: ${String(r.status)}.`
    case 'retry-selected':
    case 'cancel-selected':
      return `${action.kind === 'retry-selected' ? 'Retry' : 'Cancel'} of ${action.ids.length} selected: ${Object.entries(
        r,
      )
        .map(([status, n]) => `${String(n)} ${status}`)
        .join(', ')}.`
    case 'schedule-enable':
      return `Schedule ${action.name} enabled.`
    case 'schedule-disable':
      return `Schedule ${action.name} disabled.`
    default:
      return 'Done.'
  }
}

async function readForm(request: Request): Promise<URLSearchParams> {
  const type = request.headers.get('content-type') ?? ''
  if (!type.startsWith('application/x-www-form-urlencoded')) return new URLSearchParams()
  const body = await request.text()
  if (body.length > 256 * 1024) throw new InvalidOptionError('Form too large')
  return new URLSearchParams(body)
}

/** Where to go back to: a path below the mount point the form named, else the action's page. */
function returnPath(value: string | null, action: DashboardAction): string {
  if (value?.startsWith('/') && !value.startsWith('//') && !value.includes('\\')) return value
  if ('queue' in action) return `/queues/${encodeURIComponent(action.queue)}`
  if ('id' in action) return `/messages/${action.id}`
  if ('name' in action) return '/schedules'
  return '/messages'
}

function redirect(req: DashboardRequest, back: string, notice: string): Response {
  const url = new URL(`${req.base}${back}`, req.url)
  url.searchParams.delete('error')
  url.searchParams.set('notice', notice)
  const headers = req.headers({ location: `${url.pathname}${url.search}` })
  return new Response(null, { status: 303, headers })
}
