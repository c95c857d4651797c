#!/usr/bin/env node
// Network-latency benchmark (issue 17): W3 (drain) and W4 (latency) for
// iddqueue and the peers with every connection of the benchmark going through
// lib/delay-proxy.c, a C TCP proxy on 127.0.0.1 that delays each direction by
// half the added round trip. This kernel has no sch_netem, so `tc netem` is
// not available; the proxy is measured against a direct connection at 0 ms in
// the same invocation to show it is not the bottleneck.
//
//   node netlat.mjs [--rtt 0,1,5] [--workload drain,latency] [--runs 1]
//                   [--systems iddqueue,graphile-worker,graphile-worker:tuned,pg-boss:tuned,bullmq-pg]
//                   [--lock /tmp/iddqueue-load.lock | --no-lock] [--out results/netlat-<stamp>.jsonl]
//
// For each run, workload and system, under one hold of the exclusive load
// lock: the direct connection, then a proxy for each added round trip
// (0 = the proxy with no delay), each in a fresh database, back to back. Before
// each, the round trip of `select 1` through that port is measured (p50 of
// 200). Prints JSON lines on stdout and a table of ratios to direct on stderr.
import { spawn } from 'node:child_process'
import { appendFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { BENCH_DIR, dropDb, now, PG, pct, round } from './lib/common.mjs'
import { buildDelayProxy, startDelayProxy } from './lib/delay-proxy.mjs'
import { jsonLines, preparePeers, runPeers } from './lib/externals.mjs'
import { holdLoadLock, LOAD_LOCK } from './lib/load-lock.mjs'

const argv = process.argv.slice(2)
if (argv[0] === '--') argv.shift()
const { values: a } = parseArgs({
  args: argv,
  options: {
    rtt: { type: 'string', default: '0,1,5' },
    workload: { type: 'string', default: 'drain,latency' },
    systems: {
      type: 'string',
      default: 'iddqueue,graphile-worker,graphile-worker:tuned,pg-boss:tuned,bullmq-pg',
    },
    runs: { type: 'string', default: '1' },
    lock: { type: 'string', default: LOAD_LOCK },
    'no-lock': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
})
const rtts = a.rtt.split(',').map(Number)
const workloads = a.workload.split(',').map((s) => ({ w3: 'drain', w4: 'latency' })[s] ?? s)
const systems = a.systems.split(',').map((s) => {
  const [system, variant = 'default'] = s.split(':')
  return { system, variant }
})
const runs = Number(a.runs)
const lock = a['no-lock'] ? null : a.lock
const stamp = new Date().toISOString().replace(/[:.]/g, '-')
mkdirSync(join(BENCH_DIR, 'results'), { recursive: true })
const outFile = a.out ?? join(BENCH_DIR, 'results', `netlat-${stamp}.jsonl`)
const log = (msg) => process.stderr.write(`[netlat] ${msg}\n`)
const emit = (line) => {
  const s = JSON.stringify(line)
  process.stdout.write(`${s}\n`)
  appendFileSync(outFile, `${s}\n`)
}

const bin = buildDelayProxy()
const peerNames = [...new Set(systems.map((s) => s.system).filter((s) => s !== 'iddqueue'))]
const peers = peerNames.length ? await preparePeers(peerNames) : null
for (const n of peers?.notes ?? []) log(n)

/** p50 of 200 `select 1` round trips through `port` (the effective round trip). */
async function roundTrip(port) {
  const sql = postgres({ host: PG.host, port, user: PG.user, database: PG.adminDb, max: 1 })
  try {
    await sql`select 1`
    const t = []
    for (let i = 0; i < 200; i++) {
      const s = now()
      await sql`select 1`
      t.push(now() - s)
    }
    return round(
      pct(
        t.sort((x, y) => x - y),
        50,
      ),
      3,
    )
  } finally {
    await sql.end({ timeout: 5 })
  }
}

let dbSeq = 0
/** iddqueue's W3/W4 child (lib/child.mjs, the workspace build) with PGPORT=port. */
function runIddqueue(workload, run, port) {
  const db = `bench_netlat_${process.pid}_${dbSeq++}`
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
      { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, PGPORT: String(port) } },
    )
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const killer = setTimeout(() => child.kill('SIGKILL'), 300_000)
    child.on('close', async (code, signal) => {
      clearTimeout(killer)
      await dropDb(db).catch(() => {})
      resolve(
        jsonLines(out, (o) => o.workload).at(-1) ?? {
          system: 'iddqueue',
          workload,
          run,
          error: `child exited ${code ?? signal} without a result`,
        },
      )
    })
  })
}

async function runOne({ system, variant }, workload, run, port) {
  if (system === 'iddqueue') return runIddqueue(workload, run, port)
  const lines = await runPeers({ ...peers, systems: [system] }, workload, variant, run, {
    PGPORT: String(port),
  })
  return (
    lines.find((l) => l.system === system && l.variant === variant) ?? {
      system,
      variant,
      workload,
      run,
      error: 'no result line from the peers harness',
    }
  )
}

const results = []
const t0 = now()
log(
  `added round trips ${rtts.join(', ')} ms (+ direct), ${workloads.join(', ')}, ${systems.length} systems, ${runs} run(s) -> ${outFile}`,
)
for (let run = 1; run <= runs; run++)
  for (const workload of workloads)
    for (const sys of systems) {
      if (sys.system !== 'iddqueue' && !peers.systems.includes(sys.system)) continue
      const release = await holdLoadLock(lock)
      try {
        // Alternate the order between runs so a drift of the machine does not favour one end.
        const levels = [null, ...rtts]
        for (const rtt of run % 2 ? levels : levels.reverse()) {
          const proxy = rtt == null ? null : await startDelayProxy(bin, PG.port, (rtt * 1000) / 2)
          try {
            const port = proxy ? proxy.port : PG.port
            const rttMs = await roundTrip(port)
            log(
              `run ${run} ${sys.system}:${sys.variant} ${workload} ${rtt == null ? 'direct' : `proxy +${rtt} ms`} (select 1 p50 ${rttMs} ms)`,
            )
            const cpu0 = proxy?.cpuSeconds()
            const line = await runOne(sys, workload, run, port)
            // The proxy's own CPU over the whole child (setup included): how much of 2 cores it took.
            const proxyCpu = proxy ? round(proxy.cpuSeconds() - cpu0, 2) : null
            const tagged = {
              ...line,
              variant: line.variant ?? sys.variant,
              net: rtt == null ? 'direct' : 'proxy',
              added_rtt_ms: rtt ?? 0,
              select1_p50_ms: rttMs,
              ...(proxy ? { proxy_cpu_s: proxyCpu } : {}),
            }
            results.push(tagged)
            emit(tagged)
          } finally {
            await proxy?.stop()
          }
        }
      } finally {
        await release()
      }
    }

// ---- ratios to direct, per system/variant/workload (medians over runs) --------
const median = (xs) => {
  const v = xs.filter((x) => x != null).sort((x, y) => x - y)
  return v.length ? v[Math.floor((v.length - 1) / 2)] : null
}
const rows = []
for (const { system, variant } of systems)
  for (const workload of workloads) {
    const of = (net, rtt) =>
      results.filter(
        (r) =>
          r.system === system &&
          r.variant === variant &&
          r.workload === workload &&
          r.net === net &&
          r.added_rtt_ms === rtt &&
          !r.error,
      )
    const fig = (ls) =>
      workload === 'drain'
        ? { jobs_per_s: median(ls.map((l) => l.jobs_per_s)) }
        : { p50_ms: median(ls.map((l) => l.p50_ms)), p99_ms: median(ls.map((l) => l.p99_ms)) }
    const direct = fig(of('direct', 0))
    for (const rtt of rtts) {
      const f = fig(of('proxy', rtt))
      const row = { system, variant, workload, added_rtt_ms: rtt, direct, proxy: f }
      if (workload === 'drain')
        row.ratio =
          direct.jobs_per_s && f.jobs_per_s ? round(f.jobs_per_s / direct.jobs_per_s, 3) : null
      else {
        row.ratio_p50 = direct.p50_ms && f.p50_ms ? round(f.p50_ms / direct.p50_ms, 2) : null
        row.ratio_p99 = direct.p99_ms && f.p99_ms ? round(f.p99_ms / direct.p99_ms, 2) : null
      }
      rows.push(row)
    }
  }
for (const r of rows) emit({ stat: 'netlat-ratio', ...r })
const fmt = (x) =>
  x == null ? '–' : Number(x).toLocaleString('en-US', { maximumFractionDigits: 2 })
process.stderr.write(
  `\n| system | variant | workload | direct | added RTT | through the proxy | ratio to direct |\n|---|---|---|---|---|---|---|\n${rows
    .map((r) =>
      r.workload === 'drain'
        ? `| ${r.system} | ${r.variant} | drain jobs/s | ${fmt(r.direct.jobs_per_s)} | ${r.added_rtt_ms} ms | ${fmt(r.proxy.jobs_per_s)} | ${fmt(r.ratio)} |`
        : `| ${r.system} | ${r.variant} | latency p50 / p99 ms | ${fmt(r.direct.p50_ms)} / ${fmt(r.direct.p99_ms)} | ${r.added_rtt_ms} ms | ${fmt(r.proxy.p50_ms)} / ${fmt(r.proxy.p99_ms)} | ${fmt(r.ratio_p50)} / ${fmt(r.ratio_p99)} |`,
    )
    .join('\n')}\n`,
)
log(`${round((now() - t0) / 60000, 1)} min; results: ${outFile}`)
