import type { BulkOperation } from '../actions/bulk-operations.js'
import { formatTime } from '../html/format.js'
import { html, type SafeHtml } from '../html/html.js'
import { layout } from '../html/layout.js'
import type { PageContext } from '../html/page-context.js'

/**
 * @internal A bulk operation's progress: how many messages matched when it
 * started, the running totals after each batch, and how it ended. While it
 * runs, htmx re-fetches the `#operation` region every second (a page
 * without JavaScript reloads itself), and stops once the answer says it
 * has ended.
 */
export function operationView(page: PageContext, op: BulkOperation): SafeHtml {
  const url = `${page.base}/operations/${op.id}`
  const running = op.state === 'running'
  const retry = op.action.kind === 'retry-matching'
  const progress = op.progress as { retried?: number; cancelled?: number; requested?: number }
  const changed = retry
    ? (progress.retried ?? 0)
    : (progress.cancelled ?? 0) + (progress.requested ?? 0)
  const filter = Object.entries(op.action.filter)
    .map(([name, value]) => `${name} ${String(value)}`)
    .join(', ')
  const summary = retry
    ? `${progress.retried ?? 0} messages retried`
    : `${progress.cancelled ?? 0} messages cancelled, ${progress.requested ?? 0} cancellations requested from workers`
  const region = html`<div id="operation" data-operation-state="${op.state}"${
    running
      ? html` hx-get="${url}" hx-trigger="every 1s" hx-select="#operation" hx-swap="outerHTML"`
      : ''
  }>
<p class="${op.state === 'failed' ? 'error' : op.state === 'done' ? 'notice' : ''}" role="status">${
    op.state === 'running'
      ? html`Running: <span data-progress>${summary}</span> so far, ${op.batches} batches done.`
      : op.state === 'done'
        ? html`Done: <span data-progress>${summary}</span>.`
        : html`Failed after <span data-progress>${summary}</span>: ${op.error ?? ''}`
  }</p>
${
  op.total === undefined
    ? html`<p class="muted">Counting the matching messages…</p>`
    : html`<p><progress max="${Math.max(op.total, changed, 1)}" value="${changed}"></progress> ${changed} of ${op.total} matching when it started</p>`
}
<dl class="facts"><dt>filter</dt><dd>${filter || 'none'}</dd><dt>started</dt><dd>${formatTime(op.startedAt)}</dd><dt>finished</dt><dd>${formatTime(op.finishedAt)}</dd></dl>
</div>`
  const body = html`<h1>${retry ? 'Retry' : 'Cancel'} all matching</h1>
${region}
<p><a href="${page.base}${op.back}">Back</a></p>`
  return layout(
    page,
    {
      title: `${retry ? 'Retry' : 'Cancel'} all matching`,
      nav: 'messages',
      ...(running ? { refreshSeconds: 2 } : {}),
    },
    body,
  )
}
