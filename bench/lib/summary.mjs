// Medians across runs (as in the peers' harness) and the ratios of iddqueue's
// figures to the peers' and to PostgreSQL's ceilings, all from one invocation.
import { median, round } from './common.mjs'

const WORKER_WORKLOADS = new Set(['drain', 'latency'])
const FIELDS = [
  'seconds',
  'jobs_per_s',
  'p50_ms',
  'p90_ms',
  'p99_ms',
  'max_ms',
  'rss_mb',
  'startup_ms',
  'completed',
  // iddqueue-only diagnostics (absent from the peers' lines, so absent from their medians)
  'stop_ms',
  'exit_ms',
]
const CORE = ['seconds', 'jobs_per_s', 'p50_ms', 'p99_ms', 'rss_mb']

/** One "stat":"median" line per (system, variant, workload), same shape as the peers' run.mjs. */
export function medians(results) {
  const groups = new Map()
  for (const r of results) {
    const k = `${r.system}|${r.variant}|${r.workload}`
    if (!groups.has(k)) groups.set(k, [])
    groups.get(k).push(r)
  }
  const table = []
  for (const [, rs] of groups) {
    const ok = rs.filter((r) => !r.error)
    const first = ok[0] ?? rs[0]
    const m = {
      stat: 'median',
      system: first.system,
      version: rs.find((r) => r.version)?.version ?? null,
      variant: first.variant,
      workload: first.workload,
      runs: ok.length,
      node: first.node ?? null,
      jobs: first.jobs ?? null,
    }
    for (const f of FIELDS) {
      const v = median(ok.map((r) => r[f]))
      if (v != null || CORE.includes(f))
        m[f] = round(v, f === 'jobs_per_s' || f === 'rss_mb' ? 1 : 2)
    }
    const timeouts = rs.filter((r) => r.timeout).length
    if (timeouts) m.timeouts = timeouts
    const errors = rs.filter((r) => r.error).length
    if (errors) m.errors = errors
    const forced = rs.filter((r) => r.exit_forced).length
    if (forced) m.exits_forced = forced
    if (first.commit) m.commit = first.commit
    if (first.build) m.build = first.build
    if (first.config) m.config = first.config
    table.push(m)
  }
  return table
}

const fmt = (x) => (x == null ? '-' : String(x))

export function mediansMarkdown(table) {
  const out = [
    '| system | variant | workload | runs | jobs/s | seconds | p50 ms | p90 ms | p99 ms | max ms | RSS MB | notes |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const m of table) {
    const notes = [
      m.timeouts ? `${m.timeouts} timeout(s), ${fmt(m.completed)} done` : '',
      m.errors ? `${m.errors} error(s)` : '',
      m.exits_forced ? `${m.exits_forced} forced exit(s)` : '',
    ]
      .filter(Boolean)
      .join('; ')
    const variant = WORKER_WORKLOADS.has(m.workload) || m.system === 'pg-ceiling' ? m.variant : '-'
    out.push(
      `| ${m.system} ${m.version ?? ''} | ${variant} | ${m.workload} | ${m.runs} | ${fmt(m.jobs_per_s)} | ${fmt(m.seconds)} | ${fmt(m.p50_ms)} | ${fmt(m.p90_ms)} | ${fmt(m.p99_ms)} | ${fmt(m.max_ms)} | ${fmt(m.rss_mb)} | ${notes} |`,
    )
  }
  return out.join('\n')
}

const OURS = 'iddqueue'
const GW = 'graphile-worker'
const usable = (m) => m && !m.timeouts && !m.errors && m.runs > 0

/** The ratios the brief asks for; each names what it was computed from. */
export function ratios(table) {
  const find = (system, workload, variant = 'default') =>
    table.find((m) => m.system === system && m.workload === workload && m.variant === variant)
  const peers = (workload) =>
    table.filter(
      (m) => m.workload === workload && m.system !== OURS && m.system !== 'pg-ceiling' && usable(m),
    )
  const best = (workload, field, lower = false) =>
    peers(workload).reduce(
      (b, m) =>
        m[field] != null && (!b || (lower ? m[field] < b[field] : m[field] > b[field])) ? m : b,
      null,
    )
  const label = (m) =>
    m
      ? `${m.system}${m.version ? ` ${m.version}` : ''}${WORKER_WORKLOADS.has(m.workload) || m.system === 'pg-ceiling' ? ` ${m.variant}` : ''}`
      : null
  const rows = []
  const add = (name, field, ours, ref, note) => {
    const a = ours?.[field],
      b = ref?.[field]
    rows.push({
      ratio: name,
      field,
      ours: a ?? null,
      reference: label(ref),
      reference_value: b ?? null,
      value: a != null && b != null && b !== 0 ? round(a / b, 3) : null,
      ...(ours && !usable(ours) ? { caveat: 'iddqueue median has timeouts or errors' } : {}),
      ...(ref && !usable(ref) ? { caveat: 'reference median has timeouts or errors' } : {}),
      ...(note ? { note } : {}),
    })
  }
  const d = find(OURS, 'drain'),
    b = find(OURS, 'enqueue-batch'),
    s = find(OURS, 'enqueue-single'),
    l = find(OURS, 'latency')
  add(
    'drain / best peer (any variant)',
    'jobs_per_s',
    d,
    best('drain', 'jobs_per_s'),
    'higher is better',
  )
  add('drain / graphile-worker default', 'jobs_per_s', d, find(GW, 'drain'), 'higher is better')
  const dd = find(OURS, 'drain', 'delete')
  add(
    'drain (deleteOnSuccess) / best peer (any variant)',
    'jobs_per_s',
    dd,
    best('drain', 'jobs_per_s'),
    'higher is better; like for like with peers that delete done jobs',
  )
  add(
    'drain (deleteOnSuccess) / ceiling (delete done rows)',
    'jobs_per_s',
    dd,
    find('pg-ceiling', 'drain-ceiling', 'delete'),
    'fraction of what PostgreSQL allows',
  )
  add(
    'drain / ceiling (update, keep done rows)',
    'jobs_per_s',
    d,
    find('pg-ceiling', 'drain-ceiling', 'update'),
    'fraction of what PostgreSQL allows',
  )
  add(
    'drain / ceiling (delete done rows)',
    'jobs_per_s',
    d,
    find('pg-ceiling', 'drain-ceiling', 'delete'),
    'fraction of what PostgreSQL allows',
  )
  add(
    'enqueue-batch / graphile-worker',
    'jobs_per_s',
    b,
    find(GW, 'enqueue-batch'),
    'higher is better',
  )
  add(
    'enqueue-batch / best peer',
    'jobs_per_s',
    b,
    best('enqueue-batch', 'jobs_per_s'),
    'higher is better',
  )
  add(
    'enqueue-batch / insert ceiling',
    'jobs_per_s',
    b,
    find('pg-ceiling', 'insert-ceiling'),
    'fraction of what PostgreSQL allows',
  )
  add(
    'enqueue-single / best peer',
    'jobs_per_s',
    s,
    best('enqueue-single', 'jobs_per_s'),
    'higher is better',
  )
  add('latency p50 / graphile-worker default', 'p50_ms', l, find(GW, 'latency'), 'lower is better')
  add('latency p99 / graphile-worker default', 'p99_ms', l, find(GW, 'latency'), 'lower is better')
  add('latency p50 / best peer', 'p50_ms', l, best('latency', 'p50_ms', true), 'lower is better')
  for (const wl of ['enqueue-batch', 'enqueue-single', 'drain', 'latency'])
    add(
      `RSS ${wl} / graphile-worker default`,
      'rss_mb',
      find(OURS, wl),
      find(GW, wl),
      'peak RSS of the child; lower is better',
    )
  return rows
}

export function ratiosMarkdown(rows) {
  const out = [
    '| ratio | iddqueue | reference | reference value | ratio | note |',
    '|---|---|---|---|---|---|',
  ]
  for (const r of rows) {
    out.push(
      `| ${r.ratio} (${r.field}) | ${fmt(r.ours)} | ${fmt(r.reference)} | ${fmt(r.reference_value)} | ${r.value == null ? 'n/a' : `**${r.value}**`} | ${[r.note, r.caveat].filter(Boolean).join('; ')} |`,
    )
  }
  return out.join('\n')
}
