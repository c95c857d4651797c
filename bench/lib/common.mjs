// Shared helpers: database lifecycle, timing, percentiles, deadlines, medians.
// Ported from shared/bench/peers/lib/common.mjs (same rules), with postgres.js
// instead of pg because that is the driver iddqueue uses.

import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'

export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..')

export const PG = {
  host: process.env.PGHOST || '127.0.0.1',
  port: Number(process.env.PGPORT || 5432),
  user: process.env.PGUSER || 'root',
  // Existing database used only to run CREATE/DROP DATABASE.
  adminDb: process.env.BENCH_ADMIN_DB || 'test',
}

export const LIMIT_MS = Number(process.env.BENCH_LIMIT_MS || 120_000) // per-workload bound

export const now = () => performance.now()
export const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)))

export function connString(db) {
  return `postgres://${encodeURIComponent(PG.user)}@${PG.host}:${PG.port}/${db}`
}

/** One short-lived connection (like pg.Client in the peers' harness). */
export function client(database) {
  return postgres({
    host: PG.host,
    port: PG.port,
    user: PG.user,
    database,
    max: 1,
    onnotice: () => {},
    idle_timeout: 0,
    connection: { application_name: 'iddqueue-bench' },
  })
}

async function withClient(database, fn) {
  const c = client(database)
  try {
    return await fn(c)
  } finally {
    await c.end({ timeout: 5 })
  }
}

const ident = (name) => {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`bad db name ${name}`)
  return `"${name}"`
}

export const createDb = (name) =>
  withClient(PG.adminDb, (c) => c.unsafe(`CREATE DATABASE ${ident(name)}`))

// WITH (FORCE) (PG13+) terminates any connection that is still open.
export const dropDb = (name) =>
  withClient(PG.adminDb, (c) => c.unsafe(`DROP DATABASE IF EXISTS ${ident(name)} WITH (FORCE)`))

/** Run statements on the bench database on a short-lived connection. */
export const onDb = (db, fn) => withClient(db, fn)

/** Same "settle" step before every timed section, as in the peers' harness. */
export async function settle(db, { vacuum = false } = {}) {
  await onDb(db, async (c) => {
    if (vacuum) await c.unsafe('VACUUM (ANALYZE)')
    try {
      await c.unsafe('CHECKPOINT')
    } catch {
      /* needs superuser; harmless if refused */
    }
  })
}

/** Nearest-rank percentile of an ascending-sorted array. */
export function pct(sorted, p) {
  if (!sorted.length) return null
  const k = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)))
  return sorted[k - 1]
}

export const round = (x, d = 3) =>
  x == null || !Number.isFinite(x) ? null : Math.round(x * 10 ** d) / 10 ** d

export function deferred() {
  let resolve
  const promise = new Promise((r) => (resolve = r))
  return { promise, resolve }
}

/** Resolve `p` or give up when the deadline (absolute performance.now() ms) passes. */
export async function untilDeadline(p, deadlineAt) {
  let t
  const timer = new Promise(
    (r) => (t = setTimeout(() => r('timeout'), Math.max(0, deadlineAt - now()))),
  )
  try {
    return await Promise.race([p.then(() => 'ok'), timer])
  } finally {
    clearTimeout(t)
  }
}

export const rssMb = () => round(process.resourceUsage().maxRSS / 1024, 1) // maxRSS is in KiB

export const median = (xs) => {
  const v = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((p, q) => p - q)
  if (!v.length) return null
  const m = v.length >> 1
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2
}

/** Commit of the work tree being measured, with "+dirty" when it has uncommitted changes. */
export function gitRevision() {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: BENCH_DIR,
      encoding: 'utf8',
    }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', '../packages'], {
      cwd: BENCH_DIR,
      encoding: 'utf8',
    }).trim()
    return dirty ? `${sha}+dirty` : sha
  } catch {
    return null
  }
}

/**
 * The drain clock every drain workload shares: from starting the worker
 * (`start(onJob)`, resolving to something with `stop()`) until `jobs`
 * handlers have run and `remaining()` reads 0 (outcomes may be written in
 * batches after the handlers), or until `LIMIT_MS`. Then stops the worker
 * and closes `mon`, the connection `remaining()` reads through. `counts`
 * says which handler calls count toward `jobs` (all by default).
 */
export async function timeDrain({ jobs, start, remaining, mon, counts = () => true }) {
  let started = 0
  const allStarted = deferred()
  const onJob = (payload) => {
    if (counts(payload) && ++started === jobs) allStarted.resolve()
  }
  const t0 = now()
  const deadline = t0 + LIMIT_MS
  const worker = await start(onJob)
  const startupMs = now() - t0
  let timeout = (await untilDeadline(allStarted.promise, deadline)) === 'timeout'
  let left = await remaining()
  while (left > 0 && !timeout) {
    if (now() > deadline) {
      timeout = true
      break
    }
    await sleep(5)
    left = await remaining()
  }
  const t1 = now()
  if (timeout) left = await remaining()
  const s0 = now()
  await worker.stop()
  const stopMs = now() - s0
  await mon.end({ timeout: 5 })
  const seconds = (t1 - t0) / 1000
  return {
    completed: jobs - left,
    handlerCalls: started,
    seconds,
    timeout,
    startupMs,
    stopMs,
  }
}
