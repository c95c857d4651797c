import type { MessageRow } from '../data/list-messages.js'
import { formatTime, stateBadge } from '../html/format.js'
import { html, type SafeHtml } from '../html/html.js'
import type { PageContext } from '../html/page-context.js'

/** @internal Messages as table rows, with a selection box each unless read-only. Never arguments. */
export function messageTable(
  page: PageContext,
  items: readonly MessageRow[],
  options: { readonly select?: boolean } = {},
): SafeHtml {
  if (items.length === 0) return html`<p class="muted">No message matches.</p>`
  const select = options.select === true && !page.readOnly
  return html`<table>
<thead><tr>${select ? html`<th><span class="muted">select</span></th>` : ''}<th>id</th><th>queue</th><th>actor</th><th>state</th><th class="num">attempts</th><th>enqueued</th><th>eta</th><th>last error</th></tr></thead>
<tbody>${items.map(
    (
      m,
    ) => html`<tr data-id="${m.id}">${select ? html`<td><input type="checkbox" name="ids" value="${m.id}" aria-label="select ${m.id}"></td>` : ''}
<td><a href="${page.base}/messages/${m.id}"><code>${m.id}</code></a></td><td>${m.queue}</td><td>${m.actor}</td><td>${stateBadge(m.state)}</td>
<td class="num">${m.attempts}</td><td>${formatTime(m.enqueued_at)}</td><td>${formatTime(m.eta)}</td><td>${m.error_type ?? ''}</td></tr>`,
  )}</tbody></table>`
}
