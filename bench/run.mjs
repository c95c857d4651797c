#!/usr/bin/env node
import { spawn } from 'node:child_process'
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
// iddqueue benchmark orchestrator: the peers' workloads W1–W4 with the peers'
// rules (shared/bench/peers/README.md). Every (run, workload) runs in its own
// child process (lib/child.mjs) against its own fresh database
// (bench_iddqueue_<pid>_<n>). stdout gets JSON Lines (one per child, then one
// "stat":"median" line per group); stderr gets progress, a markdown table of
// the medians and, with peers or ceilings, a table of ratios.
//
//   node run.mjs                          # iddqueue only, 3 runs
//   node run.mjs --runs 1 --workload w3
//   node run.mjs --with-ceiling --with-peers --runs 3
import { parseArgs } from 'node:util'
import { BENCH_DIR, dropDb, gitRevision, now } from './lib/common.mjs'
import {
  CEILINGS,
  jsonLines,
  prepareCeiling,
  preparePeers,
  runCeiling,
  runPeers,
} from './lib/externals.mjs'
import { dropSnapshot, snapshotCore } from './lib/snapshot.mjs'
import { medians, mediansMarkdown, ratios, ratiosMarkdown } from './lib/summary.mjs'

const WORKLOADS = ['enqueue-batch', 'enqueue-single', 'drain', 'latency']
// Beyond the peers' four (issue 20): run only when named, or with --workload all+.
const EXTRA_WORKLOADS = [
  'drain-queues-2',
  'drain-queues-10',
  'drain-queues-200',
  'drain-delayed',
  'drain-500k',
  'drain-queues-2-500k',
  'drain-queues-10-500k',
  'drain-queues-200-500k',
  'produce-consume-queues-10',
  'claim-flat',
  'insert-plain-16',
  'insert-notify-16',
  'producers-1',
  'producers-16',
  'producers-64',
  'drain-processes-1',
  'drain-processes-2',
  'drain-processes-4',
  'produce-consume',
  'effect-tx',
  'effect-ack',
  'schedule-lag',
]
const ALIASES = { w1: 'enqueue-batch', w2: 'enqueue-single', w3: 'drain', w4: 'latency' }
const CHILD_KILL_MS = 300_000 // hard stop for a child that ignores its own 120 s bound

// `pnpm bench -- --runs 1` may hand a literal "--" through: drop it.
const argv = process.argv.slice(2)
if (argv[0] === '--') argv.shift()

// `pnpm bench --soak [--soak-ms N]`: the chaos suite's soak, 10 minutes by
// default (CI runs the same test for 60 s), with its figures on stdout.
if (argv.includes('--soak')) {
  const at = argv.indexOf('--soak-ms')
  const soakMs = at >= 0 ? Number(argv[at + 1]) : 600_000
  const { spawnSync } = await import('node:child_process')
  const core = new URL('../packages/core/', import.meta.url)
  const result = spawnSync(
    'pnpm',
    ['exec', 'vitest', 'run', '--project', 'chaos', 'test/chaos/soak.test.ts'],
    { cwd: core, stdio: 'inherit', env: { ...process.env, SOAK_MS: String(soakMs) } },
  )
  process.exit(result.status ?? 1)
}
const { values: a } = parseArgs({
  args: argv,
  options: {
    workload: { type: 'string', default: 'all' },
    variant: { type: 'string', default: 'all' },
    runs: { type: 'string', default: '3' },
    out: { type: 'string' },
    'with-peers': { type: 'boolean', default: false },
    'with-ceiling': { type: 'boolean', default: false },
    'peer-systems': { type: 'string' },
    'peer-variant': { type: 'string', default: 'all' },
    live: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
})
if (a.help) {
  console.error(
    'usage: node run.mjs [--workload w1,w2,w3,w4|enqueue-batch,...|all] [--variant default|delete|all] [--runs N (3)]\n' +
      '                   [--out results/file.jsonl]\n' +
      '                   [--with-ceiling] [--with-peers [--peer-systems a,b] [--peer-variant default|tuned|all]]\n' +
      '                   [--live (import the workspace build directly instead of a snapshot taken at start)]',
  )
  process.exit(0)
}
const workloads =
  a.workload === 'all'
    ? WORKLOADS
    : a.workload === 'all+'
      ? [...WORKLOADS, ...EXTRA_WORKLOADS]
      : a.workload
          .split(',')
          .map((s) => ALIASES[s.trim().toLowerCase()] ?? s.trim())
          .map((s) => {
            if (!WORKLOADS.includes(s) && !EXTRA_WORKLOADS.includes(s))
              throw new Error(
                `unknown workload "${s}"; expected one of ${[...WORKLOADS, ...EXTRA_WORKLOADS].join(', ')}, w1..w4, all, all+`,
              )
            return s
          })
// iddqueue's variants of the worker workloads (W3, W4): its defaults, and deleteOnSuccess.
const VARIANTS = ['default', 'delete']
const variants = a.variant === 'all' ? VARIANTS : a.variant.split(',').map((s) => s.trim())
for (const v of variants)
  if (!VARIANTS.includes(v))
    throw new Error(`unknown variant "${v}"; expected one of ${VARIANTS.join(', ')}, all`)
const variantsFor = (wl) => (wl === 'drain' || wl === 'latency' ? variants : ['default'])
const runs = Math.max(1, Number(a.runs) || 1)
const stamp = new Date().toISOString().replace(/[:.]/g, '-')
mkdirSync(join(BENCH_DIR, 'results'), { recursive: true })
const outFile = a.out ?? join(BENCH_DIR, 'results', `${stamp}.jsonl`)
const summaryFile = outFile.replace(/\.jsonl$/, '') + '-summary.json'
const log = (msg) => process.stderr.write(`[bench] ${msg}\n`)
const emit = (line) => {
  process.stdout.write(JSON.stringify(line) + '\n')
  appendFileSync(outFile, JSON.stringify(line) + '\n')
}

// ---- externals (installed before any timed work) ------------------------------
const notes = []
let ceilingDir = null,
  peers = null
if (a['with-ceiling']) ceilingDir = await prepareCeiling()
if (a['with-peers']) {
  const requested = a['peer-systems'] ? a['peer-systems'].split(',').map((s) => s.trim()) : null
  peers = await preparePeers(requested)
  notes.push(...peers.notes)
  for (const n of peers.notes) log(n)
  if (!peers.systems.length) {
    log('no peer system can run; continuing without peers')
    peers = null
  }
}

// ---- what is measured: a snapshot of the current build (see lib/snapshot.mjs) ----
let snapshot = null
if (!a.live) {
  snapshot = snapshotCore({ log })
  process.on('exit', () => dropSnapshot(snapshot.dir))
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
    process.on(sig, () => {
      log(`received ${sig}; stopping (snapshot removed)`)
      process.exit(130)
    })
}
const commit = gitRevision() // of the work tree the snapshot was built from
const childEnv = snapshot ? { ...process.env, IDDQUEUE_BENCH_CORE: snapshot.entry } : process.env

// ---- our child ----------------------------------------------------------------
let dbSeq = 0
const nextDb = (what) => `bench_${what}_${process.pid}_${dbSeq++}`

function runChild(job) {
  const db = nextDb('iddqueue')
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        join(BENCH_DIR, 'lib', 'child.mjs'),
        '--variant',
        job.variant,
        '--workload',
        job.workload,
        '--run',
        String(job.run),
        ...(job.system ? ['--system', job.system] : []),
        '--db',
        db,
        ...(commit ? ['--commit', commit] : []),
        ...(snapshot ? ['--build', snapshot.build] : []),
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: peers ? { ...childEnv, BENCH_PEERS_DIR: peers.dir } : childEnv,
      },
    )
    let buf = '',
      printedAt = null
    child.stdout.on('data', (d) => {
      buf += d
      if (printedAt == null && buf.includes('\n')) printedAt = now()
    })
    const killer = setTimeout(() => child.kill('SIGKILL'), CHILD_KILL_MS)
    child.on('error', (e) => log(`child: ${e}`))
    child.on('close', async (code, signal) => {
      clearTimeout(killer)
      const exitMs = printedAt == null ? null : now() - printedAt
      try {
        await dropDb(db)
      } catch {
        /* already gone */
      }
      let line = jsonLines(buf, (o) => o.workload).at(-1)
      if (!line)
        line = {
          system: job.system ?? 'iddqueue',
          variant: job.variant,
          workload: job.workload,
          run: job.run,
          error: `child exited ${code ?? signal} without a result`,
        }
      if (exitMs != null) line.exit_ms = Math.round(exitMs) // time from its result line to process exit
      if (code === 3) line.exit_forced = true // child had to force its own exit
      resolve(line)
    })
  })
}

// ---- plan: per run, per workload: ceiling(s) for it, iddqueue, then the peers ----
const ceilingsFor = (wl) =>
  !ceilingDir
    ? []
    : wl === 'enqueue-batch'
      ? CEILINGS.filter((c) => c.workload === 'insert-ceiling')
      : wl === 'drain'
        ? CEILINGS.filter((c) => c.workload === 'drain-ceiling')
        : []
const orphanCeilings =
  ceilingDir && !workloads.includes('enqueue-batch') && !workloads.includes('drain')

log(
  `${runs} run(s) of ${workloads.join(', ')}${ceilingDir ? ' + ceilings' : ''}${peers ? ` + peers (${peers.systems.join(', ')})` : ''} -> ${outFile}`,
)
log(
  `measuring @iddqueue/core at ${commit ?? 'unknown commit'}${snapshot ? ` (build ${snapshot.build}, snapshot ${snapshot.dir})` : ' (live workspace build)'}`,
)
const results = []
const t0 = now()
for (let r = 1; r <= runs; r++) {
  if (orphanCeilings)
    for (const c of CEILINGS) {
      const l = await runCeiling(ceilingDir, c, r, nextDb('ceiling'))
      results.push(l)
      emit(l)
    }
  for (const wl of workloads) {
    for (const c of ceilingsFor(wl)) {
      log(`run ${r} ceiling ${c.workload} ${c.variant}`)
      const l = await runCeiling(ceilingDir, c, r, nextDb('ceiling'))
      results.push(l)
      emit(l)
    }
    for (const variant of variantsFor(wl)) {
      log(`run ${r} iddqueue ${wl}${variant === 'default' ? '' : ` (${variant})`}`)
      const line = await runChild({ run: r, workload: wl, variant })
      results.push(line)
      emit(line)
    }
    // Issue 17: graphile-worker drains with the same process counts, right after iddqueue.
    if (peers?.systems.includes('graphile-worker') && wl.startsWith('drain-processes-'))
      for (const variant of a['peer-variant'] === 'all'
        ? ['default', 'tuned']
        : [a['peer-variant']]) {
        log(`run ${r} graphile-worker ${wl} (${variant})`)
        const line = await runChild({ run: r, workload: wl, variant, system: 'graphile-worker' })
        results.push(line)
        emit(line)
      }
    if (peers && WORKLOADS.includes(wl)) {
      log(`run ${r} peers ${wl} (${peers.systems.join(', ')})`)
      for (const l of await runPeers(peers, wl, a['peer-variant'], r)) {
        if (l.error) {
          // A peer child that failed (e.g. graphile-worker's pool crashing on the harness's
          // DROP DATABASE … WITH (FORCE)) is run once more; the failed line stays in the
          // file, marked retried, and is left out of the medians.
          log(
            `run ${r} peer ${l.system} ${wl} ${l.variant} failed (${String(l.error).slice(0, 80)}); retrying once`,
          )
          emit({ ...l, retried: true })
          const again =
            (await runPeers({ ...peers, systems: [l.system] }, wl, l.variant, r)).find(
              (x) => x.system === l.system && x.variant === l.variant,
            ) ?? l
          results.push(again)
          emit(again)
        } else {
          results.push(l)
          emit(l)
        }
      }
    }
  }
}

// ---- medians, tables, summary ---------------------------------------------------
const table = medians(results)
for (const m of table) emit(m)
process.stderr.write(`\n${mediansMarkdown(table)}\n`)
const rows = ratios(table)
const shown = rows.filter((r) => r.value != null)
process.stderr.write(
  shown.length
    ? `\nRatios (medians of this invocation; ${runs} run(s))\n\n${ratiosMarkdown(shown)}\n`
    : '\nNo ratios: no peer or ceiling figures in this invocation (add --with-peers / --with-ceiling).\n',
)
if (notes.length) process.stderr.write(`\nNotes:\n${notes.map((n) => `- ${n}`).join('\n')}\n`)
writeFileSync(
  summaryFile,
  JSON.stringify(
    {
      created: new Date().toISOString(),
      commit,
      runs,
      workloads,
      results_file: outFile,
      with_ceiling: Boolean(ceilingDir),
      peers: peers?.systems ?? [],
      notes,
      minutes: Math.round((now() - t0) / 600) / 100,
      ratios: rows,
      medians: table,
    },
    null,
    2,
  ) + '\n',
)
log(`results: ${outFile}\n[bench] summary: ${summaryFile}`)
