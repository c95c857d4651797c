import type { ListFailedResult } from '@iddqueue/core'
import { formatTime } from '../html/format.js'
import { html, type SafeHtml } from '../html/html.js'
import { actionButton, hiddenFields, layout, nextLink } from '../html/layout.js'
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
  const select = !page.readOnly
  const body = html`<h1>Failed messages${filter.queue ? html` in ${filter.queue}` : ''}</h1>
<p class="muted">Retry everything matching: <a href="${page.base}/messages?${all.toString()}">in the messages view</a>.</p>
${
  result.items.length === 0
    ? html`<p class="muted">No failed message.</p>`
    : html`${
        // The rows carry their own one-button forms, and forms cannot nest: the
        // selection boxes and the bulk button join this form by its id.
        select
          ? html`<form id="failed-selection" method="post" action="${page.base}/messages/bulk">${hiddenFields(page)}</form>
<p>Selected: <button type="submit" form="failed-selection" name="op" value="retry-selected">Retry selected</button></p>`
          : ''
      }<table><thead><tr>${select ? html`<th><span class="muted">select</span></th>` : ''}<th>id</th><th>queue</th><th>actor</th><th class="num">retries</th><th>failed</th><th>error</th><th></th></tr></thead><tbody>${result.items.map(
        (m) =>
          html`<tr data-id="${m.id}">${select ? html`<td><input type="checkbox" name="ids" value="${m.id}" form="failed-selection" aria-label="select ${m.id}"></td>` : ''}<td><a href="${page.base}/messages/${m.id}"><code>${m.id}</code></a></td><td>${m.queue}</td><td>${m.actor}</td><td class="num">${m.retries}</td><td>${formatTime(m.updatedAt)}</td><td><strong>${m.failure?.type ?? ''}</strong> ${m.failure?.message ?? ''}</td><td>${actionButton(page, `/messages/${m.id}/retry`, 'Retry')}</td></tr>`,
      )}</tbody></table>`
}
${nextLink(page, '/failed', params, ['after', result.nextAfter])}`
  return layout(page, { title: 'Failed', nav: 'failed', live: true }, body)
}
