import type { WorkerRow } from '../data/list-workers.js'
import { formatDuration, formatTime } from '../html/format.js'
import { html, type SafeHtml } from '../html/html.js'
import { layout, nextLink } from '../html/layout.js'
import type { PageContext } from '../html/page-context.js'

/** @internal Registered workers: heartbeat age, queues, what they hold. */
export function workersView(
  page: PageContext,
  result: { readonly items: readonly WorkerRow[]; readonly nextAfter: string | null },
): SafeHtml {
  const body = html`<h1>Workers</h1>
${
  result.items.length === 0
    ? html`<p class="muted">No worker is registered.</p>`
    : html`<table><thead><tr><th>id</th><th>host</th><th class="num">pid</th><th>queues</th><th class="num">concurrency</th><th class="num">holding</th><th>started</th><th class="num">heartbeat</th></tr></thead><tbody>${result.items.map(
        (w) =>
          html`<tr data-id="${w.id}"><td><code>${w.id}</code></td><td>${w.host}</td><td class="num">${w.pid}</td><td>${w.queues.join(', ')}</td><td class="num">${w.concurrency}</td><td class="num">${w.holding}</td><td>${formatTime(w.started_at)}</td><td class="num">${formatDuration(Math.max(0, w.heartbeat_age_ms))} ago</td></tr>`,
      )}</tbody></table>`
}
${nextLink(page, '/workers', [], ['after', result.nextAfter])}`
  return layout(page, { title: 'Workers', nav: 'workers', live: true }, body)
}
