#!/usr/bin/env node
// A/B of two or more builds of @iddqueue/core in one invocation, alternating
// per run (A, B, A, B, ...) so that the machine's drift hits both alike.
// Each build is a snapshot directory made by lib/snapshot.mjs; `current`
// takes one of the workspace build now, and `--save DIR` keeps that
// snapshot for a later invocation (for example the build before a change).
//
//   node ab.mjs --save /tmp/before                      # snapshot the current build, exit
//   node ab.mjs --core before=/tmp/before --core after=current \
//               --workload drain,drain-queues-2 --runs 3
//
// Prints one JSON line per child on stdout and a table of medians, with
// each build's ratio to the first build, on stderr.
import { spawn } from 'node:child_process'
import { renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { BENCH_DIR, dropDb } from './lib/common.mjs'
import { jsonLines } from './lib/externals.mjs'
import { dropSnapshot, snapshotCore } from './lib/snapshot.mjs'

const { values: a } = parseArgs({
  options: {
    core: { type: 'string', multiple: true, default: [] },
    workload: { type: 'string', default: 'drain' },
    runs: { type: 'string', default: '3' },
    save: { type: 'string' },
  },
})
const log = (msg) => process.stderr.write(`[ab] ${msg}\n`)

if (a.save) {
  const s = snapshotCore({ log })
  rmSync(a.save, { recursive: true, force: true })
  renameSync(s.dir, a.save)
  log(`saved build ${s.build} to ${a.save}`)
  process.exit(0)
}

let current = null
// `name=DIR` or `name=current`, optionally `+FILE`: a module of claim
// statements the bench's brokers use instead of their own (lib/adapter.mjs).
const cores = a.core.map((spec) => {
  const [name, rest] = spec.split('=')
  const [dir, claim] = (rest ?? '').split('+')
  if (!name || !dir) throw new Error(`--core expects name=DIR|current[+claim.mjs], got "${spec}"`)
  if (dir === 'current') current ??= snapshotCore({ log })
  const entry =
    dir === 'current'
      ? current.entry
      : join(dir, 'node_modules', '@iddqueue', 'core', 'dist', 'index.js')
  return { name, entry, claim }
})
if (current) process.on('exit', () => dropSnapshot(current.dir))
if (cores.length < 1) throw new Error('give at least one --core name=dir|current')
const workloads = a.workload.split(',').map((s) => s.trim())
const runs = Math.max(1, Number(a.runs) || 1)

let seq = 0
function runChild(core, workload, run) {
  const db = `bench_ab_${process.pid}_${seq++}`
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        join(BENCH_DIR, 'lib', 'child.mjs'),
        '--workload',
        workload,
        '--run',
        String(run),
        '--db',
        db,
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: {
          ...process.env,
          IDDQUEUE_BENCH_CORE: core.entry,
          ...(core.claim ? { IDDQUEUE_BENCH_CLAIM: core.claim } : {}),
        },
      },
    )
    let buf = ''
    child.stdout.on('data', (d) => {
      buf += d
    })
    child.on('close', async () => {
      await dropDb(db).catch(() => {})
      const line = jsonLines(buf, (o) => o.workload).at(-1) ?? { workload, error: 'no result' }
      resolve({ ...line, core: core.name })
    })
  })
}

const results = []
for (let r = 1; r <= runs; r++) {
  for (const wl of workloads) {
    // Alternate which build goes first from run to run.
    const order = r % 2 === 1 ? cores : [...cores].reverse()
    for (const core of order) {
      const line = await runChild(core, wl, r)
      results.push(line)
      process.stdout.write(`${JSON.stringify(line)}\n`)
      log(
        `run ${r} ${wl} ${core.name}: ${line.jobs_per_s ?? line.p50_ms ?? line.error} ${line.error ? String(line.error).slice(0, 200) : ''}`,
      )
    }
  }
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y)
  return s.length === 0
    ? null
    : s.length % 2
      ? s[(s.length - 1) / 2]
      : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const lines = [
  '| workload | ' + cores.map((c) => c.name).join(' | ') + ' |',
  `|---|${cores.map(() => '---|').join('')}`,
]
for (const wl of workloads) {
  const med = cores.map((c) =>
    median(
      results
        .filter((l) => l.workload === wl && l.core === c.name && !l.error)
        .map((l) => l.jobs_per_s),
    ),
  )
  lines.push(
    `| ${wl} | ${med.map((m, i) => (m == null ? '—' : `${Math.round(m)}${i > 0 && med[0] ? ` (${(m / med[0]).toFixed(2)}x)` : ''}`)).join(' | ')} |`,
  )
}
process.stderr.write(`\nmedian jobs/s over ${runs} run(s)\n\n${lines.join('\n')}\n`)
