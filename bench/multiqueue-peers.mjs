#!/usr/bin/env node
// The peers in issue 20's several-queues shape: the same backlog (50,000
// no-op jobs spread evenly over 1, 2 and 10 queues) drained by one worker
// process of concurrency 16, for iddqueue (defaults), graphile-worker (the
// peers harness's tuned settings, one task identifier per "queue", all in one
// runner) and pg-boss (the harness's tuned work() loops dealt over the queues
// in one process), each drain in a fresh database and its own child process
// (lib/multiqueue-child.mjs, systems in lib/multiqueue-systems.mjs).
//
//   node multiqueue-peers.mjs [--queues 1,2,10] [--runs 1] [--jobs 50000]
//       [--systems iddqueue,graphile-worker:tuned,pg-boss:tuned]
//       [--lock /tmp/iddqueue-load.lock | --no-lock] [--out results/multiqueue-peers-<stamp>.jsonl]
//
// Takes the exclusive load lock itself, once per run (all queue counts and
// systems of that run back to back, systems in reverse order on even runs);
// use --no-lock when wrapping it in flock. Prints JSON lines on stdout and
// a table on stderr: jobs/s, the ratio to the system's own one-queue drain
// and the ratio to iddqueue's at the same number of queues (medians over runs).
import { spawn } from 'node:child_process'
import { appendFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { BENCH_DIR, createDb, dropDb, median, now, round } from './lib/common.mjs'
import { jsonLines, preparePeers } from './lib/externals.mjs'
import { holdLoadLock, LOAD_LOCK } from './lib/load-lock.mjs'

const argv = process.argv.slice(2)
if (argv[0] === '--') argv.shift()
const { values: a } = parseArgs({
  args: argv,
  options: {
    queues: { type: 'string', default: '1,2,10' },
    systems: { type: 'string', default: 'iddqueue,graphile-worker:tuned,pg-boss:tuned' },
    runs: { type: 'string', default: '1' },
    jobs: { type: 'string', default: '50000' },
    lock: { type: 'string', default: LOAD_LOCK },
    'no-lock': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
})
const queueCounts = a.queues.split(',').map(Number)
const systems = a.systems.split(',').map((s) => {
  const [system, variant = 'default'] = s.split(':')
  return { system, variant }
})
const runs = Number(a.runs)
const lock = a['no-lock'] ? null : a.lock
const stamp = new Date().toISOString().replace(/[:.]/g, '-')
mkdirSync(join(BENCH_DIR, 'results'), { recursive: true })
const outFile = a.out ?? join(BENCH_DIR, 'results', `multiqueue-peers-${stamp}.jsonl`)
const log = (msg) => process.stderr.write(`[multiqueue] ${msg}\n`)
const emit = (line) => {
  const s = JSON.stringify(line)
  process.stdout.write(`${s}\n`)
  appendFileSync(outFile, `${s}\n`)
}

const peerNames = [...new Set(systems.map((s) => s.system).filter((s) => s !== 'iddqueue'))]
const peers = peerNames.length ? await preparePeers(peerNames) : null
for (const n of peers?.notes ?? []) log(n)
const runnable = systems.filter((s) => s.system === 'iddqueue' || peers.systems.includes(s.system))

let dbSeq = 0
// Databases of children still running, dropped on the way out if interrupted.
const live = new Set()
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, async () => {
    for (const db of live) await dropDb(db).catch(() => {})
    process.exit(130)
  })

/** One drain in a fresh database; resolves to its result line. */
async function drainOnce({ system, variant }, queues, run) {
  const db = `bench_mq_${process.pid}_${dbSeq++}`
  live.add(db)
  try {
    await createDb(db)
    const r = await new Promise((resolve) => {
      const child = spawn(
        process.execPath,
        [
          join(BENCH_DIR, 'lib', 'multiqueue-child.mjs'),
          ...['--system', system, '--variant', variant, '--queues', String(queues)],
          ...['--jobs', a.jobs, '--run', String(run), '--db', db],
        ],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
          env: { ...process.env, BENCH_PEERS_DIR: peers?.dir ?? '' },
        },
      )
      let out = ''
      child.stdout.on('data', (d) => (out += d))
      const killer = setTimeout(() => child.kill('SIGKILL'), 300_000)
      child.on('close', (code, signal) => {
        clearTimeout(killer)
        resolve({ code, signal, out })
      })
    })
    return (
      jsonLines(r.out, (o) => o.workload).at(-1) ?? {
        system,
        variant,
        workload: 'drain-multiqueue',
        queues,
        run,
        error: `child exited ${r.code ?? r.signal} without a result`,
      }
    )
  } finally {
    await dropDb(db).catch(() => {})
    live.delete(db)
  }
}

const results = []
const t0 = now()
log(
  `${a.jobs} jobs over ${queueCounts.join(', ')} queue(s); ${runnable.map((s) => `${s.system}:${s.variant}`).join(', ')}; ${runs} run(s) -> ${outFile}`,
)
for (let run = 1; run <= runs; run++) {
  const release = await holdLoadLock(lock)
  try {
    const order = run % 2 ? runnable : [...runnable].reverse()
    for (const queues of queueCounts)
      for (const sys of order) {
        const line = await drainOnce(sys, queues, run)
        log(
          `run ${run} ${sys.system}:${sys.variant} ${queues} queue(s): ${line.error ? `ERROR ${line.error.split('\n')[0]}` : `${line.jobs_per_s} jobs/s${line.timeout ? ' (timeout)' : ''}`}`,
        )
        results.push(line)
        emit(line)
      }
  } finally {
    await release()
  }
}

// ---- medians and ratios -------------------------------------------------------
const fig = (system, variant, queues) =>
  median(
    results
      .filter(
        (r) =>
          r.system === system &&
          r.variant === variant &&
          r.queues === queues &&
          !r.error &&
          !r.timeout,
      )
      .map((r) => r.jobs_per_s),
  )
const ratio = (x, y) => (x != null && y ? round(x / y, 2) : null)
const rows = []
for (const { system, variant } of runnable)
  for (const queues of queueCounts) {
    const jps = fig(system, variant, queues)
    rows.push({
      stat: 'multiqueue-median',
      system,
      variant,
      queues,
      jobs_per_s: jps == null ? null : round(jps, 0),
      vs_own_1_queue: ratio(jps, fig(system, variant, queueCounts[0])),
      vs_iddqueue: ratio(jps, fig('iddqueue', 'default', queues)),
    })
  }
for (const r of rows) emit(r)
const fmt = (x) =>
  x == null ? '–' : Number(x).toLocaleString('en-US', { maximumFractionDigits: 2 })
process.stderr.write(
  `\n| system | variant | queues | jobs/s | vs its ${queueCounts[0]}-queue drain | vs iddqueue |\n|---|---|---|---|---|---|\n${rows
    .map(
      (r) =>
        `| ${r.system} | ${r.variant} | ${r.queues} | ${fmt(r.jobs_per_s)} | ${fmt(r.vs_own_1_queue)} | ${fmt(r.vs_iddqueue)} |`,
    )
    .join('\n')}\n`,
)
log(`${round((now() - t0) / 60000, 1)} min; results: ${outFile}`)
