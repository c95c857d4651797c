// Issue 17's scaling workloads, run by lib/child.mjs like the others:
//   drain-processes-N: W3's drain (50,000 prefilled, VACUUM + CHECKPOINT) by N
//     worker processes sharing W3's concurrency budget of 16 (16/N each);
//     clock from spawning them until no message is left undone.
//   produce-consume: a producer offering BENCH_RATE messages/s (default 2,000)
//     for BENCH_PRODUCE_S seconds (default 20) in 10 ms batches while one
//     worker (concurrency 16) consumes; send->start latency and the backlog
//     (queued messages) every second.
//   produce-consume-queues-10: the same over 10 queues (messages sent
//     round-robin, one worker consuming all ten).
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import * as adapter from './adapter.mjs'
import { client, connString, deferred, LIMIT_MS, now, pct, settle, sleep } from './common.mjs'

const SCALE_JOBS = 50_000
const BUDGET = 16
const WORKER = fileURLToPath(new URL('./scale-worker.mjs', import.meta.url))
const GRAPHILE_WORKER = fileURLToPath(new URL('./scale-graphile-worker.mjs', import.meta.url))

// The same drain for graphile-worker (issue 17: the peer at the same process
// counts, in the same invocation): its producer and "remaining" query from the
// peers' harness adapter, its worker processes from scale-graphile-worker.mjs.
async function systemParts(system, variant) {
  if (system === 'iddqueue')
    return {
      producer: adapter.producer,
      remaining: adapter.sql.remaining,
      args: (url, c) => [WORKER, url, String(c)],
    }
  if (system !== 'graphile-worker') throw new Error(`drain-processes: unknown system ${system}`)
  const dir = process.env.BENCH_PEERS_DIR
  if (!dir)
    throw new Error(
      'drain-processes for graphile-worker needs BENCH_PEERS_DIR (run.mjs --with-peers)',
    )
  const gw = await import(pathToFileURL(join(dir, 'lib', 'adapters', 'graphile-worker.mjs')).href)
  return {
    producer: gw.producer,
    remaining: gw.sql.remaining,
    args: (url, c) => [GRAPHILE_WORKER, url, String(c), variant],
    name: gw.name,
    version: gw.version,
    describe: `graphile-worker ${variant}: concurrentJobs ${BUDGET}/N per process, maxPoolSize max(10, concurrentJobs + 2)${variant === 'tuned' ? ', localQueue 500, completeJobBatchDelay 0, failJobBatchDelay 0' : ''}`,
  }
}

function startProcess(args) {
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: process.env,
  })
  const exited = new Promise((resolve) => child.on('exit', resolve))
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      if (String(chunk).includes('ready')) resolve()
    })
    void exited.then((code) => reject(new Error(`worker process exited ${code}`)))
  })
  ready.catch(() => {})
  return { child, ready, exited }
}

export async function drainProcesses(db, processes, system = 'iddqueue', variant = 'default') {
  const parts = await systemParts(system, variant)
  const p = await parts.producer(connString(db))
  for (let i = 0; i < SCALE_JOBS; i += 1_000)
    await p.addBatch(Array.from({ length: 1_000 }, (_, k) => ({ i: i + k })))
  await p.close()
  await settle(db, { vacuum: true })
  const mon = client(db)
  await mon`select 1`
  const remaining = async () => (await mon.unsafe(parts.remaining))[0].n
  const t0 = now()
  const workers = Array.from({ length: processes }, () =>
    startProcess(parts.args(connString(db), BUDGET / processes)),
  )
  let timeout = false
  try {
    await Promise.all(workers.map((w) => w.ready))
    const startupMs = now() - t0
    let left = await remaining()
    while (left > 0) {
      if (now() - t0 > LIMIT_MS) {
        timeout = true
        break
      }
      await sleep(10)
      left = await remaining()
    }
    const secs = (now() - t0) / 1000
    const s0 = now()
    for (const w of workers) w.child.kill('SIGTERM')
    await Promise.all(workers.map((w) => w.exited))
    return {
      jobs: SCALE_JOBS,
      completed: SCALE_JOBS - left,
      seconds: secs,
      timeout,
      processes,
      ...(parts.name
        ? { system: parts.name, version: parts.version, config_override: parts.describe }
        : {}),
      concurrency_per_process: BUDGET / processes,
      startup_ms: startupMs,
      stop_ms: now() - s0,
    }
  } finally {
    for (const w of workers) w.child.kill('SIGKILL')
    await mon.end({ timeout: 5 })
  }
}

export async function produceConsume(db, queues = 1) {
  const rate = Number(process.env.BENCH_RATE || 2_000)
  const seconds = Number(process.env.BENCH_PRODUCE_S || 20)
  const perTick = Math.max(1, Math.round(rate / 100))
  const total = perTick * 100 * seconds
  const p =
    queues === 1
      ? await adapter.producer(connString(db))
      : await adapter.multiProducer(connString(db), queues)
  await settle(db)
  const lat = []
  const allStarted = deferred()
  const onJob = (payload) => {
    lat.push(now() - payload.t)
    if (lat.length === total) allStarted.resolve()
  }
  const w =
    queues === 1
      ? await adapter.startWorker(connString(db), 'default', onJob)
      : await adapter.startMultiWorker(connString(db), queues, onJob)
  const mon = client(db)
  const backlog = []
  const t0 = now()
  const sampler = setInterval(() => {
    const at = Math.round((now() - t0) / 1000)
    mon`select count(*)::int as n from iddqueue.messages where state = 'queued'`.then(
      ([row]) => backlog.push([at, row.n]),
      () => {},
    )
  }, 1_000)
  let sent = 0
  let behind = 0
  try {
    for (let tick = 0; tick < seconds * 100; tick++) {
      const due = t0 + tick * 10
      if (now() < due) await sleep(due - now())
      else behind++
      const t = now()
      await p.addBatch(Array.from({ length: perTick }, () => ({ t })))
      sent += perTick
    }
    const produceSecs = (now() - t0) / 1000
    // A cleared timer, not sleep(): a pending 60 s sleep kept the child alive until its forced exit.
    let limit
    const result = await Promise.race([
      allStarted.promise,
      new Promise((resolve) => {
        limit = setTimeout(() => resolve('timeout'), LIMIT_MS)
      }),
    ])
    clearTimeout(limit)
    const secs = (now() - t0) / 1000
    lat.sort((x, y) => x - y)
    return {
      jobs: total,
      completed: lat.length,
      seconds: secs,
      timeout: result === 'timeout',
      offered_per_s: rate,
      queues,
      achieved_offer_per_s: sent / produceSecs,
      ticks_behind: behind,
      p50_ms: pct(lat, 50),
      p99_ms: pct(lat, 99),
      max_ms: lat.at(-1),
      backlog_per_s: backlog,
      jobs_per_s_override: lat.length / secs,
    }
  } finally {
    clearInterval(sampler)
    await p.close()
    await w.stop()
    await mon.end({ timeout: 5 })
  }
}
