import type { AttemptRecord, MessageInfo } from '@iddqueue/core'
import { formatDuration, formatTime, json, stateBadge } from '../html/format.js'
import { html, type SafeHtml } from '../html/html.js'
import { actionButton, layout } from '../html/layout.js'
import type { PageContext } from '../html/page-context.js'

/** @internal A stored result, as the message view shows it. */
export interface StoredResult {
  readonly status: string
  readonly value: unknown
  readonly storedAt: Date
}

/** @internal What the message view shows; payload fields only once asked for (and redacted). */
export interface MessageDetail {
  readonly info: MessageInfo
  /** The W3C traceparent the tracing plugin stored with the message, if any. */
  readonly traceparent?: string
  readonly attempts?: readonly AttemptRecord[]
  /** Present when results are stored (the `@iddqueue/results` tables exist). */
  readonly result?: StoredResult | null
  readonly payload?: {
    readonly args: unknown
    readonly options: unknown
    readonly result?: unknown
  }
}

/** @internal One message: state, attempts, failure and stack, result, history; retry and cancel. */
export function messageView(page: PageContext, detail: MessageDetail): SafeHtml {
  const { info } = detail
  const here = `/messages/${info.id}`
  const trace = detail.traceparent
  const actions = [
    info.state === 'rejected' ? actionButton(page, `${here}/retry`, 'Retry') : '',
    info.state === 'queued' || info.state === 'consumed'
      ? actionButton(page, `${here}/cancel`, 'Cancel', { danger: true })
      : '',
  ]
  const body = html`<h1>Message <code>${info.id}</code></h1>
<p>${stateBadge(info.state)} ${info.cancelRequested ? html`<span class="badge">cancel requested</span>` : ''} ${actions}</p>
<dl class="facts">
<dt>queue</dt><dd><a href="${page.base}/queues/${encodeURIComponent(info.queue)}">${info.queue}</a></dd>
<dt>actor</dt><dd>${info.actor}</dd>
<dt>priority</dt><dd>${info.priority}</dd>
<dt>attempts</dt><dd>${info.attempts} (${info.retries} retried)</dd>
<dt>enqueued</dt><dd>${formatTime(info.enqueuedAt)}</dd>
<dt>eta</dt><dd>${formatTime(info.eta)}</dd>
<dt>started</dt><dd>${formatTime(info.startedAt)}</dd>
<dt>updated</dt><dd>${formatTime(info.updatedAt)}</dd>
${info.progress !== null && info.progress !== undefined ? html`<dt>progress</dt><dd><code>${JSON.stringify(info.progress)}</code></dd>` : ''}
${trace ? html`<dt>trace</dt><dd><code>${trace}</code></dd>` : ''}
</dl>
${
  info.failure
    ? html`<h2>Last failure</h2>
<p><strong>${info.failure.type}</strong> at attempt ${info.failure.attempt}, ${info.failure.at}</p>
<pre>${info.failure.message}</pre>
${info.failure.stack ? html`<details><summary>Stack</summary><pre>${info.failure.stack}</pre></details>` : detail.payload ? '' : html`<p class="muted">The stack is shown with the payload.</p>`}`
    : ''
}
${
  detail.result === undefined
    ? ''
    : detail.result === null
      ? html`<h2>Result</h2><p class="muted">No result stored (or it expired).</p>`
      : html`<h2>Result</h2><p>${detail.result.status}, stored ${formatTime(detail.result.storedAt)}</p>${detail.payload ? html`<pre>${json(detail.payload.result)}</pre>` : ''}`
}
<h2>Payload</h2>
${
  detail.payload
    ? html`<h3>Arguments</h3><pre data-payload="args">${json(detail.payload.args)}</pre><h3>Options</h3><pre>${json(detail.payload.options)}</pre>`
    : html`<p class="muted">Arguments, options, stack and result value are hidden. <a href="${page.base}${here}?payload=1" rel="nofollow">Show the payload</a></p>`
}
${
  detail.attempts === undefined
    ? html`<h2>Attempt history</h2><p class="muted">Attempt history is not recorded (the attemptHistory() plugin is not installed).</p>`
    : html`<h2>Attempt history</h2>${
        detail.attempts.length === 0
          ? html`<p class="muted">No attempt recorded.</p>`
          : html`<table><thead><tr><th>started</th><th>finished</th><th>status</th><th class="num">duration</th><th>error</th></tr></thead><tbody>${detail.attempts.map(
              (a) =>
                html`<tr><td>${formatTime(a.startedAt)}</td><td>${formatTime(a.finishedAt)}</td><td>${a.status}</td><td class="num">${a.durationMs === null ? '' : formatDuration(a.durationMs)}</td><td>${a.errorType ?? ''} ${a.errorMessage ?? ''}</td></tr>`,
            )}</tbody></table>`
      }`
}`
  return layout(page, { title: `Message ${info.id}`, nav: 'none', live: true }, body)
}
