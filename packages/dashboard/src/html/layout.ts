import { CSRF_FIELD } from '../security/csrf.js'
import { type HtmlValue, html, type SafeHtml } from './html.js'
import type { PageContext } from './page-context.js'

/** @internal The views the navigation links to. */
export type NavKey = 'overview' | 'messages' | 'failed' | 'workers' | 'schedules' | 'none'

const NAV: readonly [NavKey, string, string][] = [
  ['overview', '/', 'Overview'],
  ['messages', '/messages', 'Messages'],
  ['failed', '/failed', 'Failed'],
  ['workers', '/workers', 'Workers'],
  ['schedules', '/schedules', 'Schedules'],
]

const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  historyCacheSize: 0,
})

/**
 * @internal A whole page. `live` marks the region the live script refreshes
 * (through htmx, re-fetching this page and swapping that region only); its
 * attributes are not inherited, so forms and links inside it still swap
 * the whole page (with its notice) as boosted navigation.
 */
export function layout(
  page: PageContext,
  options: {
    readonly title: string
    readonly nav: NavKey
    readonly live?: boolean
    /** Without JavaScript, reload the page every this many seconds (a running operation). */
    readonly refreshSeconds?: number
  },
  body: HtmlValue,
): SafeHtml {
  const { base } = page
  const url = `${base}${page.here}`
  const content = options.live
    ? html`<div id="live" hx-get="${url}" hx-trigger="iddqueue:refresh from:body" hx-select="#live" hx-swap="outerHTML" hx-disinherit="*">${body}</div>`
    : body
  return html`<!doctype html>
<html lang="en" data-events="${options.live ? `${base}/events` : ''}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content="${HTMX_CONFIG}">
<meta name="csrf-token" content="${page.csrf}">
<title>${options.title} · iddqueue</title>
<link rel="icon" href="data:,">
${options.refreshSeconds ? html`<noscript><meta http-equiv="refresh" content="${options.refreshSeconds}"></noscript>` : ''}
<link rel="stylesheet" href="${base}/static/dashboard.css">
<script src="${base}/static/htmx.min.js" defer></script>
<script src="${base}/static/dashboard.js" defer></script>
</head>
<body hx-boost="true">
<header><strong>iddqueue</strong><nav>${NAV.map(
    ([key, path, label]) =>
      html`<a href="${base}${path}"${key === options.nav ? html` aria-current="page"` : ''}>${label}</a>`,
  )}</nav>${page.readOnly ? html`<span class="badge">read-only</span>` : ''}</header>
<main>
${page.notice ? html`<p class="notice" role="status">${page.notice}</p>` : ''}
${page.error ? html`<p class="error" role="alert">${page.error}</p>` : ''}
${content}
</main>
</body>
</html>`
}

/**
 * @internal A one-button form posting to `action` (below the mount point),
 * with the CSRF token and where to come back to. Nothing in read-only mode.
 */
export function actionButton(
  page: PageContext,
  action: string,
  label: string,
  options: { readonly danger?: boolean; readonly fields?: Readonly<Record<string, string>> } = {},
): SafeHtml {
  if (page.readOnly) return html``
  return html`<form class="inline" method="post" action="${page.base}${action}">${hiddenFields(page, options.fields)}<button type="submit"${options.danger ? html` class="danger"` : ''}>${label}</button></form>`
}

/** @internal The CSRF token and return path, for a form. */
export function hiddenFields(
  page: PageContext,
  fields: Readonly<Record<string, string>> = {},
): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${page.csrf}"><input type="hidden" name="return" value="${page.here}">${Object.entries(
    fields,
  ).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}`
}

/** @internal A "next page" link keeping the other query parameters. */
export function nextLink(
  page: PageContext,
  path: string,
  params: readonly [string, string][],
  cursor: readonly [string, string | null],
): SafeHtml {
  if (cursor[1] === null) return html``
  const query = new URLSearchParams([...params, [cursor[0], cursor[1]]])
  return html`<p class="pager"><a href="${page.base}${path}?${query.toString()}" rel="next">Next page →</a></p>`
}
