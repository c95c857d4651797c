import type { QueueStats } from '@iddqueue/metrics'
import { MESSAGE_STATES } from '@iddqueue/schema'

const COLUMNS = ['queue', ...MESSAGE_STATES, 'ready', 'scheduled', 'oldest ready'] as const

/**
 * @internal The stats as a table for people: a row per queue and, with
 * several queues, a total row. Estimated counts read `~n`.
 */
export function formatStats(stats: readonly QueueStats[]): string {
  if (stats.length === 0) return 'no messages\n'
  const rows = stats.map((s) => [
    s.queue,
    ...MESSAGE_STATES.map((state) =>
      s.estimated && (state === 'done' || state === 'cancelled')
        ? `~${s[state]}`
        : String(s[state]),
    ),
    String(s.ready),
    String(s.scheduled),
    duration(s.oldestReadyMs / 1000),
  ])
  if (stats.length > 1) {
    const sum = (pick: (s: QueueStats) => number) => String(stats.reduce((n, s) => n + pick(s), 0))
    const estimated = stats.some((s) => s.estimated)
    rows.push([
      'total',
      ...MESSAGE_STATES.map((state) =>
        estimated && (state === 'done' || state === 'cancelled')
          ? `~${sum((s) => s[state])}`
          : sum((s) => s[state]),
      ),
      sum((s) => s.ready),
      sum((s) => s.scheduled),
      duration(Math.max(...stats.map((s) => s.oldestReadyMs)) / 1000),
    ])
  }
  const table = [[...COLUMNS], ...rows]
  const widths = COLUMNS.map((_, i) => Math.max(...table.map((row) => row[i]!.length)))
  return table
    .map((row) =>
      row
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join('  '),
    )
    .join('\n')
    .concat('\n')
}

/** `0s`, `42s`, `3m 20s`, `5h 2m`, `2d 4h`. */
function duration(seconds: number): string {
  const s = Math.floor(seconds)
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`
}
