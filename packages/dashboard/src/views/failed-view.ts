import type { ListFailedResult } from '@iddqueue/core'
import { formatTime } from '../html/format.js'
import { html, type SafeHtml } from '../html/html.js'
import { actionButton, layout, nextLink } from '../html/layout.js'
import type { PageContext } from '../html/page-context.js'

/** @internal Rejected messages from core's `listFailed()` (cursor-paginated on `messages_rejected`). */
export function failedView(
  page: PageContext,
  filter: { readonly queue?: string; readonly actor?: string },
  result: ListFailedResult,
): SafeHtml {
  const params: [string, string][] = []
  if (filter.queue) params.push(['queue', filter.queue])
  if (filter.actor) params.push(['actor', filter.actor])
  const all = new URLSearchParams([...params, ['state', 'rejected']])
  const body = html`<h1>Failed messages${filter.queue ? html` in ${filter.queue}` : ''}</h1>
<p class="muted">Bulk retry: <a href="${page.base}/messages?${all.toString()}">select in the messages view</a>.</p>
${
  result.items.length === 0
    ? html`<p class="muted">No failed message.</p>`
    : html`<table><thead><tr><th>id</th><th>queue</th><th>actor</th><th class="num">retries</th><th>failed</th><th>error</th><th></th></tr></thead><tbody>${result.items.map(
        (m) =>
          html`<tr data-id="${m.id}"><td><a href="${page.base}/messages/${m.id}"><code>${m.id}</code></a></td><td>${m.queue}</td><td>${m.actor}</td><td class="num">${m.retries}</td><td>${formatTime(m.updatedAt)}</td><td><strong>${m.failure?.type ?? ''}</strong> ${m.failure?.message ?? ''}</td><td>${actionButton(page, `/messages/${m.id}/retry`, 'Retry')}</td></tr>`,
      )}</tbody></table>`
}
${nextLink(page, '/failed', params, ['after', result.nextAfter])}`
  return layout(page, { title: 'Failed', nav: 'failed', live: true }, body)
}
