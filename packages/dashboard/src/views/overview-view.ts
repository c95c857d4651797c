import type { QueueStats } from '@iddqueue/metrics'
import type { Throughput } from '../data/throughput.js'
import { formatCount, formatDuration } from '../html/format.js'
import { html, type SafeHtml } from '../html/html.js'
import { layout } from '../html/layout.js'
import type { PageContext } from '../html/page-context.js'
import { throughputChart } from './throughput-chart.js'

/** @internal Queues per overview page. */
export const QUEUES_PER_PAGE = 50

/**
 * @internal Per queue: counts by state, ready, scheduled, oldest ready,
 * paused; the hour's throughput. "done / hour" is the queue's chart total
 * (its done per minute over the current minute and the 59 before it), not
 * `QueueStats.doneLastHour`, which the live hub does not read.
 */
export function overviewView(
  page: PageContext,
  data: {
    readonly stats: readonly QueueStats[]
    readonly paused: ReadonlySet<string>
    readonly throughput: ReadonlyMap<string, Throughput>
    readonly after?: string
  },
): SafeHtml {
  // Paused queues with no message still belong on the overview, and so do
  // queues whose only rows finished in the last hour (a sample can miss them).
  const queues = new Map(data.stats.map((s) => [s.queue, s]))
  const estimated = data.stats.some((s) => s.estimated)
  for (const queue of data.paused) if (!queues.has(queue)) queues.set(queue, emptyStats(queue))
  for (const queue of data.throughput.keys())
    if (queue !== '' && !queues.has(queue))
      queues.set(queue, { ...emptyStats(queue), ...(estimated ? { estimated: true } : {}) })
  const doneLastHour = (queue: string) =>
    (data.throughput.get(queue)?.done ?? []).reduce((a, b) => a + b, 0)
  const all = [...queues.values()].sort((a, b) => (a.queue < b.queue ? -1 : 1))
  const rows = all.filter((s) => data.after === undefined || s.queue > data.after)
  const shown = rows.slice(0, QUEUES_PER_PAGE)
  const next = rows.length > QUEUES_PER_PAGE ? shown[shown.length - 1]!.queue : null
  const q = (queue: string) => `${page.base}/queues/${encodeURIComponent(queue)}`
  const body = html`<h1>Overview</h1>
${throughputChart(data.throughput.get(''))}
<h2>Queues</h2>
${
  shown.length === 0
    ? html`<p class="muted">No messages in this namespace yet.</p>`
    : html`<table>
<thead><tr><th>queue</th><th class="num">ready</th><th class="num">scheduled</th><th class="num">oldest ready</th><th class="num">queued</th><th class="num">consumed</th><th class="num">done</th><th class="num">rejected</th><th class="num">cancelled</th><th class="num">done / hour</th></tr></thead>
<tbody>${shown.map(
        (
          s,
        ) => html`<tr data-queue="${s.queue}"><td><a href="${q(s.queue)}">${s.queue}</a> ${data.paused.has(s.queue) ? html`<span class="badge paused">paused</span>` : ''}</td>
<td class="num">${s.ready}</td><td class="num">${s.scheduled}</td><td class="num">${s.oldestReadyMs > 0 ? formatDuration(s.oldestReadyMs) : '–'}</td>
<td class="num">${s.queued}</td><td class="num">${s.consumed}</td><td class="num">${formatCount(s.done, s.estimated)}</td><td class="num"><a href="${page.base}/failed?queue=${encodeURIComponent(s.queue)}">${s.rejected}</a></td><td class="num">${formatCount(s.cancelled, s.estimated)}</td><td class="num">${doneLastHour(s.queue)}</td></tr>`,
      )}</tbody></table>`
}
${shown.some((s) => s.estimated) ? html`<p class="muted">≈ done and cancelled totals are estimated from a sample of the messages table (every other count is exact).</p>` : ''}
${next === null ? '' : html`<p class="pager"><a href="${page.base}/?after=${encodeURIComponent(next)}" rel="next">Next page →</a></p>`}`
  return layout(page, { title: 'Overview', nav: 'overview', live: true }, body)
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
