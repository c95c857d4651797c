import type { QueueStats } from '@iddqueue/metrics'
import type { ScheduleInfo } from '@iddqueue/scheduler'
import type { MessagePage } from '../data/list-messages.js'
import type { LimitRow } from '../data/queue-limits.js'
import type { Throughput } from '../data/throughput.js'
import { formatCount, formatDuration, formatTime } from '../html/format.js'
import { html, type SafeHtml } from '../html/html.js'
import { actionButton, layout, nextLink } from '../html/layout.js'
import type { PageContext } from '../html/page-context.js'
import { messageTable } from './message-table.js'
import { scheduleTable } from './schedules-view.js'
import { throughputChart } from './throughput-chart.js'

/** @internal One queue: its counts, pause/resume, its schedules, its latest messages. */
export function queueView(
  page: PageContext,
  data: {
    readonly queue: string
    readonly stats: QueueStats
    readonly paused: boolean
    readonly throughput: Throughput | undefined
    readonly messages: MessagePage
    readonly schedules: readonly ScheduleInfo[] | undefined
    /** Undefined without the coordination plugin. */
    readonly limits: readonly LimitRow[] | undefined
  },
): SafeHtml {
  const { queue, stats } = data
  const path = `/queues/${encodeURIComponent(queue)}`
  const body = html`<h1>Queue ${queue} ${data.paused ? html`<span class="badge paused">paused</span>` : ''}</h1>
<p>${data.paused ? actionButton(page, `${path}/resume`, 'Resume') : actionButton(page, `${path}/pause`, 'Pause', { danger: true })}</p>
<dl class="facts">
<dt>ready</dt><dd>${stats.ready}</dd><dt>scheduled</dt><dd>${stats.scheduled}</dd>
<dt>oldest ready</dt><dd>${stats.oldestReadyMs > 0 ? formatDuration(stats.oldestReadyMs) : '–'}</dd>
<dt>queued</dt><dd>${stats.queued}</dd><dt>consumed</dt><dd>${stats.consumed}</dd><dt>done</dt><dd>${formatCount(stats.done, stats.estimated)}</dd>
<dt>rejected</dt><dd><a href="${page.base}/failed?queue=${encodeURIComponent(queue)}">${stats.rejected}</a></dd><dt>cancelled</dt><dd>${formatCount(stats.cancelled, stats.estimated)}</dd>
</dl>
${throughputChart(data.throughput)}
${data.limits === undefined ? '' : html`<h2>Limits</h2>${limitTable(data.limits)}`}
${data.schedules === undefined ? '' : html`<h2>Schedules</h2>${scheduleTable(page, data.schedules)}`}
<h2>Messages</h2>
${messageTable(page, data.messages.items)}
${nextLink(page, '/messages', [['queue', queue]], ['before', data.messages.nextBefore])}`
  return layout(page, { title: `Queue ${queue}`, nav: 'overview', live: true }, body)
}

function limitTable(limits: readonly LimitRow[]): SafeHtml {
  if (limits.length === 0) return html`<p class="muted">No limit on this queue or its actors.</p>`
  return html`<table><thead><tr><th>scope</th><th>name</th><th class="num">concurrency</th><th>rate</th><th>held until</th></tr></thead><tbody>${limits.map(
    (l) =>
      html`<tr data-limit="${l.scope}:${l.name}"><td>${l.scope}</td><td>${l.name}</td><td class="num">${l.concurrency ?? '–'}</td><td>${l.rate ? `${l.rate.limit} per ${formatDuration(l.rate.periodMs)}` : '–'}</td><td>${formatTime(l.heldUntil)}</td></tr>`,
  )}</tbody></table>`
}
