import type { Throughput } from '../data/throughput.js'
import { html, type SafeHtml } from '../html/html.js'

const WIDTH = 600
const HEIGHT = 120

/**
 * @internal The last hour as inline SVG: one bar per clock minute (the
 * current one, so far, and the 59 before it), done stacked under rejected.
 * Inline markup, so it needs no script and the CSP allows it; the totals are
 * also written out as text.
 */
export function throughputChart(series: Throughput | undefined): SafeHtml {
  const done = series?.done ?? new Array<number>(60).fill(0)
  const rejected = series?.rejected ?? new Array<number>(60).fill(0)
  const peak = Math.max(1, ...done.map((d, i) => d + rejected[i]!))
  const bar = WIDTH / done.length
  const bars = done.map((d, i) => {
    const r = rejected[i]!
    const dh = (d / peak) * (HEIGHT - 10)
    const rh = (r / peak) * (HEIGHT - 10)
    const x = (i * bar).toFixed(1)
    const ago = done.length - 1 - i
    return html`<g><title>${ago === 0 ? 'this minute' : `${ago} min ago`}: ${d} done, ${r} rejected</title><rect class="done" x="${x}" y="${(HEIGHT - dh).toFixed(1)}" width="${(bar - 1).toFixed(1)}" height="${dh.toFixed(1)}"></rect><rect class="rejected" x="${x}" y="${(HEIGHT - dh - rh).toFixed(1)}" width="${(bar - 1).toFixed(1)}" height="${rh.toFixed(1)}"></rect></g>`
  })
  const totalDone = done.reduce((a, b) => a + b, 0)
  const totalRejected = rejected.reduce((a, b) => a + b, 0)
  return html`<figure><svg class="chart" role="img" aria-label="Messages finished per minute, last hour" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}">${bars}</svg>
<figcaption class="muted">Last hour (this minute and the 59 before it): ${totalDone} done, ${totalRejected} rejected (per minute, peak ${peak === 1 && totalDone + totalRejected === 0 ? 0 : peak}).</figcaption></figure>`
}
