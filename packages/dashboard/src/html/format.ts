import { html, type SafeHtml } from './html.js'

/** @internal A duration for people: 850 ms, 12 s, 3 m 5 s, 2 h 10 m, 3 d 4 h. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  const s = Math.floor(ms / 1000)
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} m ${s % 60} s`
  const h = Math.floor(m / 60)
  if (h < 48) return `${h} h ${m % 60} m`
  return `${Math.floor(h / 24)} d ${h % 24} h`
}

/** @internal A time in UTC, to the second, in a `<time>` element. */
export function formatTime(date: Date | null | undefined): SafeHtml {
  if (!date) return html`<span class="muted">–</span>`
  const iso = date.toISOString()
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')}</time>`
}

/** @internal A state as a badge. */
export function stateBadge(state: string): SafeHtml {
  return html`<span class="badge ${state}">${state}</span>`
}

/** @internal A value as indented JSON text (never markup). */
export function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? 'undefined'
  } catch {
    return String(value)
  }
}

/**
 * @internal A count that may be an estimate (`queueStats()`'s sampled done
 * and cancelled totals): shown as "≈ n", with a title saying so.
 */
export function formatCount(n: number, estimated: boolean | undefined): SafeHtml {
  if (!estimated) return html`${n}`
  return html`<span class="estimate" title="estimated from a sample of the messages table">≈ ${n}</span>`
}
