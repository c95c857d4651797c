import { MESSAGE_STATES } from '@iddqueue/schema'
import { filterParams, type MessageFilter, type MessagePage } from '../data/list-messages.js'
import { html, type SafeHtml } from '../html/html.js'
import { hiddenFields, layout, nextLink } from '../html/layout.js'
import type { PageContext } from '../html/page-context.js'
import { messageTable } from './message-table.js'

/**
 * @internal Whether "everything matching" may be handed to core's bulk
 * operations, which filter by queue and actor (and, for cancel, queued or
 * consumed): a time range or an args search has no bulk equivalent there.
 */
export function matchingScope(filter: MessageFilter): { retry: boolean; cancel: boolean } {
  const plain = filter.from === undefined && filter.to === undefined && filter.args === undefined
  return {
    retry: plain && filter.state === 'rejected',
    cancel: plain && (filter.state === 'queued' || filter.state === 'consumed'),
  }
}

/** @internal The filterable, keyset-paginated messages list with bulk actions. */
export function messagesView(
  page: PageContext,
  filter: MessageFilter,
  result: MessagePage | undefined,
): SafeHtml {
  const value = (v: string | undefined) => v ?? ''
  const params = filterParams(filter)
  const scope = matchingScope(filter)
  const bulk = page.readOnly
    ? ''
    : html`<p>Selected: <button type="submit" name="op" value="retry-selected">Retry selected</button>
<button type="submit" name="op" value="cancel-selected" class="danger">Cancel selected</button>
${scope.retry ? html` · All matching: <button type="submit" name="op" value="retry-matching">Retry all matching</button>` : ''}
${scope.cancel ? html` · All matching: <button type="submit" name="op" value="cancel-matching" class="danger">Cancel all matching</button>` : ''}
${!scope.retry && !scope.cancel ? html`<span class="muted"> · To act on everything matching, filter by state rejected (retry) or queued/consumed (cancel), without a time range or args search.</span>` : ''}</p>`
  const body = html`<h1>Messages</h1>
<form class="filters" method="get" action="${page.base}/messages">
<label>queue <input name="queue" value="${value(filter.queue)}" size="14"></label>
<label>actor <input name="actor" value="${value(filter.actor)}" size="14"></label>
<label>state <select name="state"><option value="">any</option>${MESSAGE_STATES.map(
    (s) => html`<option${s === filter.state ? html` selected` : ''}>${s}</option>`,
  )}</select></label>
<label>enqueued from <input name="from" value="${filter.from?.toISOString() ?? ''}" placeholder="2030-01-01T00:00Z" size="18"></label>
<label>to <input name="to" value="${filter.to?.toISOString() ?? ''}" size="18"></label>
<label>args contain (JSON) <input name="args" value="${filter.args === undefined ? '' : JSON.stringify(filter.args)}" placeholder='[{"user":42}]' size="18"></label>
<button type="submit">Filter</button>
</form>
${
  result === undefined
    ? ''
    : html`<form method="post" action="${page.base}/messages/bulk">${hiddenFields(page, Object.fromEntries(params))}
${bulk}
${messageTable(page, result.items, { select: true })}
</form>
${nextLink(page, '/messages', params, ['before', result.nextBefore])}`
}`
  return layout(page, { title: 'Messages', nav: 'messages' }, body)
}
