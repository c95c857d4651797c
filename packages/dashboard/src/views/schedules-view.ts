import type { ScheduleInfo } from '@iddqueue/scheduler'
import { formatDuration, formatTime } from '../html/format.js'
import { html, type SafeHtml } from '../html/html.js'
import { actionButton, layout } from '../html/layout.js'
import type { PageContext } from '../html/page-context.js'

/** @internal Schedules per page. */
export const SCHEDULES_PER_PAGE = 50

/** @internal Schedules as table rows with enable/disable. */
export function scheduleTable(page: PageContext, schedules: readonly ScheduleInfo[]): SafeHtml {
  if (schedules.length === 0) return html`<p class="muted">No schedule.</p>`
  return html`<table><thead><tr><th>name</th><th>actor</th><th>queue</th><th>timing</th><th>next run</th><th>last run</th><th>enabled</th><th></th></tr></thead><tbody>${schedules.map(
    (s) =>
      html`<tr data-schedule="${s.name}"><td>${s.name}</td><td>${s.actor}</td><td>${s.queue}</td><td>${s.cron ? html`<code>${s.cron}</code> ${s.timezone}` : `every ${formatDuration(s.everyMs ?? 0)}`}</td><td>${formatTime(s.nextRunAt)}</td><td>${formatTime(s.lastRunAt)}</td><td>${s.enabled ? 'yes' : html`<span class="badge paused">disabled</span>`}</td><td>${
        s.enabled
          ? actionButton(page, `/schedules/${encodeURIComponent(s.name)}/disable`, 'Disable', {
              danger: true,
            })
          : actionButton(page, `/schedules/${encodeURIComponent(s.name)}/enable`, 'Enable')
      }</td></tr>`,
  )}</tbody></table>`
}

/** @internal The schedules view; `undefined` when the scheduler's tables are not installed. */
export function schedulesView(
  page: PageContext,
  schedules: readonly ScheduleInfo[] | undefined,
  after: string | undefined,
): SafeHtml {
  let body: SafeHtml
  if (schedules === undefined) {
    body = html`<h1>Schedules</h1><p class="muted">The scheduler (<code>@iddqueue/scheduler</code>) is not installed in this namespace.</p>`
  } else {
    const rows = schedules.filter((s) => after === undefined || s.name > after)
    const shown = rows.slice(0, SCHEDULES_PER_PAGE)
    const next = rows.length > SCHEDULES_PER_PAGE ? shown[shown.length - 1]!.name : null
    body = html`<h1>Schedules</h1>${scheduleTable(page, shown)}${
      next === null
        ? ''
        : html`<p class="pager"><a href="${page.base}/schedules?after=${encodeURIComponent(next)}" rel="next">Next page →</a></p>`
    }`
  }
  return layout(page, { title: 'Schedules', nav: 'schedules', live: true }, body)
}
