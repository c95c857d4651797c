// Runs ONE workload for iddqueue in a fresh database, prints one JSON line on
// stdout, drops the database and exits. Spawned by ../run.mjs so that
// process.resourceUsage().maxRSS is per workload.
//
// Port of shared/bench/peers/lib/child.mjs for one system: the workload
// definitions, clocks, deadlines, settle steps and output fields are the same;
// only the monitoring connection uses postgres.js instead of pg.
import { parseArgs } from 'node:util'
import postgresClient from 'postgres'
import * as adapter from './adapter.mjs'
import {
  client,
  connString,
  createDb,
  deferred,
  dropDb,
  LIMIT_MS,
  now,
  onDb,
  PG,
  pct,
  round,
  rssMb,
  settle,
  sleep,
  timeDrain,
  untilDeadline,
} from './common.mjs'
import { drainProcesses, produceConsume } from './scale.mjs'

const { values: a } = parseArgs({
  options: {
    variant: { type: 'string', default: 'default' },
    // drain-processes-N only: graphile-worker runs the same drain (lib/scale.mjs).
    system: { type: 'string', default: 'iddqueue' },
    workload: { type: 'string' },
    run: { type: 'string', default: '1' },
    db: { type: 'string' },
    commit: { type: 'string' },
    build: { type: 'string' },
  },
})

// ---- workload definitions (identical to the peers') --------------------------
const W1_JOBS = 50_000,
  W1_CHUNK = 1_000
const W2_JOBS = 5_000
const W3_JOBS = 50_000
const W4_JOBS = 1_000,
  W4_GAP_MS = 5,
  W4_WARMUP = 20

async function count(db, which) {
  return onDb(db, async (c) => (await c.unsafe(adapter.sql[which]))[0].n)
}

async function prefill(p, n, deadlineAt) {
  for (let i = 0; i < n; i += W1_CHUNK) {
    if (now() > deadlineAt) throw new Error(`prefill exceeded ${LIMIT_MS} ms`)
    const chunk = []
    for (let j = i; j < Math.min(n, i + W1_CHUNK); j++) chunk.push({ i: j })
    await p.addBatch(chunk)
  }
}

const WORKLOADS = {
  // W1: 50,000 jobs through the bulk API in 50 awaited calls of 1,000.
  async 'enqueue-batch'(db) {
    const p = await adapter.producer(connString(db))
    const chunks = []
    for (let i = 0; i < W1_JOBS; i += W1_CHUNK)
      chunks.push(Array.from({ length: W1_CHUNK }, (_, k) => ({ i: i + k })))
    await settle(db)
    const lat = []
    let done = 0,
      timeout = false
    const t0 = now()
    for (const chunk of chunks) {
      if (now() - t0 > LIMIT_MS) {
        timeout = true
        break
      }
      const s = now()
      await p.addBatch(chunk)
      lat.push(now() - s)
      done += chunk.length
    }
    const secs = (now() - t0) / 1000
    await p.close()
    const stored = await count(db, 'total')
    lat.sort((x, y) => x - y)
    return {
      jobs: W1_JOBS,
      completed: done,
      seconds: secs,
      timeout,
      p50_ms: pct(lat, 50),
      p99_ms: pct(lat, 99),
      ...(stored !== done ? { error: `stored ${stored} != enqueued ${done}` } : {}),
    }
  },

  // W2: 5,000 jobs, one awaited single-job call at a time.
  async 'enqueue-single'(db) {
    const p = await adapter.producer(connString(db))
    await settle(db)
    const lat = []
    let timeout = false
    const t0 = now()
    for (let i = 0; i < W2_JOBS; i++) {
      if (now() - t0 > LIMIT_MS) {
        timeout = true
        break
      }
      const s = now()
      await p.addOne({ i })
      lat.push(now() - s)
    }
    const secs = (now() - t0) / 1000
    await p.close()
    const stored = await count(db, 'total')
    lat.sort((x, y) => x - y)
    return {
      jobs: W2_JOBS,
      completed: lat.length,
      seconds: secs,
      timeout,
      p50_ms: pct(lat, 50),
      p90_ms: pct(lat, 90),
      p99_ms: pct(lat, 99),
      max_ms: lat.at(-1),
      ...(stored !== lat.length ? { error: `stored ${stored} != enqueued ${lat.length}` } : {}),
    }
  },

  // W3: 50,000 jobs queued (bulk API, untimed), then one in-process worker;
  // clock runs from worker start until the database shows all 50,000 done.
  async drain(db) {
    const p = await adapter.producer(connString(db), a.variant)
    await prefill(p, W3_JOBS, now() + LIMIT_MS)
    await p.close()
    if ((await count(db, 'total')) !== W3_JOBS) throw new Error('prefill count mismatch')
    await settle(db, { vacuum: true })

    const mon = client(db)
    await mon`select 1` // connect before the clock starts (pg.Client.connect() in the peers' harness)
    const remaining = async () => (await mon.unsafe(adapter.sql.remaining))[0].n

    // Every handler has run, then outcomes may still be in flight (iddqueue
    // settles in batches): the clock stops when the table shows all done.
    const d = await timeDrain({
      jobs: W3_JOBS,
      start: (onJob) => adapter.startWorker(connString(db), a.variant, onJob),
      remaining,
      mon,
    })
    return {
      jobs: W3_JOBS,
      completed: d.completed,
      handler_calls: d.handlerCalls,
      seconds: d.seconds,
      timeout: d.timeout,
      startup_ms: d.startupMs,
      stop_ms: d.stopMs,
      p50_ms: null,
      p99_ms: null,
      jobs_per_s_override: d.completed / d.seconds,
    }
  },

  // W4: worker idle; 1,000 single enqueues on a fixed 5 ms schedule; latency =
  // handler start - enqueue call start.
  async latency(db) {
    const p = await adapter.producer(connString(db), a.variant) // schema, untimed
    await p.close()
    await settle(db)
    const enq = new Float64Array(W4_JOBS)
    const lat = new Float64Array(W4_JOBS).fill(NaN)
    let measured = 0,
      warm = 0,
      lastStart = 0
    const warmDone = deferred(),
      allDone = deferred()
    const onJob = (payload) => {
      const t = now()
      if (payload.warm != null) {
        if (++warm === W4_WARMUP) warmDone.resolve()
        return
      }
      if (Number.isNaN(lat[payload.i])) {
        lat[payload.i] = t - enq[payload.i]
        lastStart = t
        if (++measured === W4_JOBS) allDone.resolve()
      }
    }
    const w = await adapter.startWorker(connString(db), a.variant, onJob)
    // Warm-up (not measured): a few jobs so connections/prepared statements exist.
    for (let k = 0; k < W4_WARMUP; k++) {
      await w.addOne({ warm: k })
      await sleep(W4_GAP_MS)
    }
    const warmRes = await untilDeadline(warmDone.promise, now() + LIMIT_MS)
    await sleep(1000) // let the worker go idle
    const t0 = now()
    const deadlineAt = t0 + LIMIT_MS
    let sent = 0
    for (let i = 0; i < W4_JOBS; i++) {
      const target = t0 + i * W4_GAP_MS // fixed-rate schedule (start-to-start)
      const d = target - now()
      if (d > 0) await sleep(d)
      if (now() > deadlineAt) break
      enq[i] = now()
      await w.addOne({ i })
      sent++
    }
    const timeout = (await untilDeadline(allDone.promise, deadlineAt)) === 'timeout'
    const tEnd = now()
    const s0 = now()
    await w.stop()
    const stopMs = now() - s0
    // Jobs never started by the deadline are censored at their age at the
    // deadline (a lower bound), so a timed-out run cannot look fast.
    const vals = []
    let censored = 0
    for (let i = 0; i < W4_JOBS; i++) {
      if (!Number.isNaN(lat[i])) vals.push(lat[i])
      else {
        censored++
        vals.push(i < sent ? tEnd - enq[i] : tEnd - t0)
      }
    }
    vals.sort((x, y) => x - y)
    const secs = ((measured === W4_JOBS ? lastStart : tEnd) - t0) / 1000
    return {
      jobs: W4_JOBS,
      completed: measured,
      seconds: secs,
      timeout,
      p50_ms: pct(vals, 50),
      p90_ms: pct(vals, 90),
      p99_ms: pct(vals, 99),
      max_ms: vals.at(-1),
      mean_ms: vals.reduce((s, x) => s + x, 0) / vals.length,
      stop_ms: stopMs,
      ...(censored ? { censored } : {}),
      ...(warmRes === 'timeout' ? { warmup_timeout: true } : {}),
    }
  },
}

// ---- issue 20: several queues, delayed backlogs --------------------------------
const MULTI_JOBS = 50_000
const DELAYED_BACKLOG = 250_000

/**
 * Prefills `jobs` (default `MULTI_JOBS`) ready messages spread round-robin over `queues` queues
 * (priority 10 when a delayed backlog is asked for, after `delayed` messages at
 * priority 0 delayed an hour), then drains them with one worker over every
 * queue; same clock and end condition as W3.
 */
async function drainMulti(db, queues, delayed = 0, jobs = MULTI_JOBS) {
  const p = await adapter.multiProducer(connString(db), queues)
  const deadlineAt = now() + LIMIT_MS
  for (let i = 0; i < delayed; i += W1_CHUNK) {
    if (now() > deadlineAt) throw new Error(`prefill exceeded ${LIMIT_MS} ms`)
    const chunk = Array.from({ length: Math.min(W1_CHUNK, delayed - i) }, (_, k) => ({ d: i + k }))
    await p.addBatch(chunk, { priority: 0, delayMs: 3_600_000 })
  }
  for (let i = 0; i < jobs; i += W1_CHUNK) {
    if (now() > deadlineAt) throw new Error(`prefill exceeded ${LIMIT_MS} ms`)
    const chunk = Array.from({ length: W1_CHUNK }, (_, k) => ({ i: i + k }))
    await p.addBatch(chunk, delayed > 0 ? { priority: 10 } : {})
  }
  await p.close()
  const total = await onDb(db, async (c) => (await c.unsafe(adapter.multiSql.total))[0].n)
  if (total !== jobs + delayed) throw new Error('prefill count mismatch')
  await settle(db, { vacuum: true })
  const mon = client(db)
  await mon`select 1`
  const remaining = async () => (await mon.unsafe(adapter.multiSql.remaining))[0].n
  const d = await timeDrain({
    jobs,
    start: (onJob) => adapter.startMultiWorker(connString(db), queues, onJob),
    remaining,
    mon,
    counts: (payload) => payload.d === undefined, // a delayed message started early: counted below
  })
  return {
    jobs,
    completed: d.completed,
    handler_calls: d.handlerCalls,
    seconds: d.seconds,
    timeout: d.timeout,
    startup_ms: d.startupMs,
    stop_ms: d.stopMs,
    p50_ms: null,
    p99_ms: null,
    queues,
    delayed,
    jobs_per_s_override: d.completed / d.seconds,
  }
}

WORKLOADS['drain-queues-2'] = (db) => drainMulti(db, 2)
WORKLOADS['drain-queues-10'] = (db) => drainMulti(db, 10)
WORKLOADS['drain-queues-200'] = (db) => drainMulti(db, 200)
WORKLOADS['drain-delayed'] = (db) => drainMulti(db, 1, DELAYED_BACKLOG)
// The same with 500,000 messages, against the single queue's drain of 500,000 (drain-500k).
WORKLOADS['drain-500k'] = (db) => drainMulti(db, 1, 0, 500_000)
WORKLOADS['drain-queues-2-500k'] = (db) => drainMulti(db, 2, 0, 500_000)
WORKLOADS['drain-queues-10-500k'] = (db) => drainMulti(db, 10, 0, 500_000)
WORKLOADS['drain-queues-200-500k'] = (db) => drainMulti(db, 200, 0, 500_000)
WORKLOADS['produce-consume-queues-10'] = (db) => produceConsume(db, 10)

// ---- issue 20: one claim's time against the backlog ------------------------------
const FLAT_BACKLOGS = [10_000, 100_000, 1_000_000]
const FLAT_CLAIMS = 41
const FLAT_BATCH = 500

/**
 * One claim of 500 messages, timed from the client (median of 21, each in a
 * transaction rolled back so every claim sees the same backlog), over 1 and
 * over 10 queues with 10,000, 100,000 and 1,000,000 ready messages
 * (distinct etas, as sends made over time). `ratio_*`: the 1,000,000-message
 * claim's time over the 10,000-message one (target: at most 1.2).
 */
async function claimFlat(db) {
  // One database per backlog, claimed from in turn (10k, 100k, 1M, 10k, ...):
  // a drift of the machine during the run falls on every size alike, where
  // measuring the sizes one after the other made it look like a trend.
  const mon = client(db)
  const dbs = FLAT_BACKLOGS.map((backlog) => `${db}_flat_${backlog}`)
  const out = {}
  const clients = []
  try {
    for (const name of dbs) await mon.unsafe(`create database ${name}`)
    const { claimOne, claimMany } = await adapter.claimStatements(connString(dbs[0]))
    for (const name of dbs.slice(1)) await adapter.claimStatements(connString(name))
    clients.push(...dbs.map((name) => client(name)))
    for (const queues of [1, 10]) {
      const names = Array.from({ length: queues }, (_, i) => `q_${i}`)
      for (const [k, backlog] of FLAT_BACKLOGS.entries()) {
        const sql = clients[k]
        await sql`truncate iddqueue.messages`
        // Time-ordered ids, as sends make them (UUIDv7): the claim's new row
        // versions then land on a few leaf pages of the primary key, where
        // random ids spread them over one leaf page each of a 1M-entry index.
        await sql.unsafe(
          `insert into iddqueue.messages (id, queue, actor, args, eta, enqueued_at)
           select (lpad(to_hex(${Date.now() - 3_600_000} + i), 12, '0') || '7000' || '8000' || lpad(to_hex(i), 12, '0'))::uuid,
                  'q_' || (i % ${queues}), 'noop', '[]'::jsonb,
                  now() - (${backlog} - i) * interval '1 millisecond', now()
             from generate_series(1, ${backlog}) i`,
        )
        await sql.unsafe('vacuum (analyze) iddqueue.messages')
      }
      // The backlogs' writes (and an earlier workload's) are flushed now, not
      // by a checkpoint in the middle of the timed claims.
      await mon`checkpoint`
      const times = FLAT_BACKLOGS.map(() => [])
      for (let n = 0; n < FLAT_CLAIMS; n++) {
        for (const [k, sql] of clients.entries()) {
          const t = now()
          await sql
            .begin(async (tx) => {
              const rows = await tx.unsafe(queues === 1 ? claimOne : claimMany, [
                names,
                FLAT_BATCH,
                crypto.randomUUID(),
              ])
              if (rows.length !== FLAT_BATCH) throw new Error(`claimed ${rows.length}`)
              throw Object.assign(new Error('rollback'), { rollback: true })
            })
            .catch((error) => {
              if (!error.rollback) throw error
            })
          times[k].push(now() - t)
        }
      }
      for (const [k, backlog] of FLAT_BACKLOGS.entries()) {
        const sorted = times[k].sort((x, y) => x - y)
        out[`claim_ms_q${queues}_${backlog}`] = round(sorted[FLAT_CLAIMS >> 1], 2)
      }
      out[`ratio_q${queues}`] = round(
        out[`claim_ms_q${queues}_${FLAT_BACKLOGS.at(-1)}`] /
          out[`claim_ms_q${queues}_${FLAT_BACKLOGS[0]}`],
        2,
      )
    }
  } finally {
    await Promise.all(clients.map((sql) => sql.end({ timeout: 5 })))
    for (const name of dbs) await mon.unsafe(`drop database if exists ${name} with (force)`)
    await mon.end({ timeout: 5 })
  }
  return { jobs: null, completed: null, seconds: null, timeout: false, batch: FLAT_BATCH, ...out }
}
WORKLOADS['claim-flat'] = (db) => claimFlat(db)

// ---- issue 17: several worker processes, produce while consuming ---------------
WORKLOADS['drain-processes-1'] = (db) => drainProcesses(db, 1, a.system, a.variant)
WORKLOADS['drain-processes-2'] = (db) => drainProcesses(db, 2, a.system, a.variant)
WORKLOADS['drain-processes-4'] = (db) => drainProcesses(db, 4, a.system, a.variant)
WORKLOADS['produce-consume'] = (db) => produceConsume(db)

// ---- issue 20: concurrent producers (a web server's shape) --------------------
const PRODUCER_JOBS = 8_000
const MAX_PRODUCER_POOL = 32 // 64 producers share 32 connections: the shared cluster allows 100

/** `producers` concurrent loops, each awaiting one `send()` at a time, 8,000 sends in all; no worker. */
async function produce(db, producers) {
  const pool = Math.max(2, Math.min(producers, MAX_PRODUCER_POOL)) // iddqueue needs 2 at least
  const p = await adapter.singleSender(connString(db), pool)
  await p.addOne({ warm: true }) // connect, prepare (untimed)
  await settle(db)
  const lat = []
  let next = 0
  const t0 = now()
  const deadlineAt = t0 + LIMIT_MS
  let timeout = false
  const loop = async () => {
    while (next < PRODUCER_JOBS) {
      if (now() > deadlineAt) {
        timeout = true
        return
      }
      const i = next++
      const s = now()
      await p.addOne({ i })
      lat.push(now() - s)
    }
  }
  await Promise.all(Array.from({ length: producers }, loop))
  const secs = (now() - t0) / 1000
  await p.close()
  lat.sort((x, y) => x - y)
  return {
    jobs: PRODUCER_JOBS,
    completed: lat.length,
    seconds: secs,
    timeout,
    p50_ms: pct(lat, 50),
    p99_ms: pct(lat, 99),
    producers,
    pool,
  }
}

/**
 * PostgreSQL alone in the same shape: 16 connections each awaiting a one-row
 * insert into the messages table (`notify`: plus a `pg_notify` in the same
 * statement, as sends did before decision 0010).
 */
async function plainInserts(db, notify) {
  const p = await adapter.producer(connString(db)) // schema only
  await p.close()
  const sql = postgres16(db)
  await sql`select 1`
  await settle(db)
  const text = notify
    ? `with i as (insert into iddqueue.messages (id, queue, actor, args) values (gen_random_uuid(), 'default', 'noop', $1::jsonb) returning queue)
       select pg_notify('bench_wake', queue) from i`
    : `insert into iddqueue.messages (id, queue, actor, args) values (gen_random_uuid(), 'default', 'noop', $1::jsonb)`
  let next = 0
  const t0 = now()
  const loop = async () => {
    while (next < PRODUCER_JOBS) {
      const i = next++
      await sql.unsafe(text, [JSON.stringify([{ i }])], { prepare: true })
    }
  }
  await Promise.all(Array.from({ length: 16 }, loop))
  const secs = (now() - t0) / 1000
  await sql.end({ timeout: 5 })
  return {
    jobs: PRODUCER_JOBS,
    completed: PRODUCER_JOBS,
    seconds: secs,
    timeout: false,
    connections: 16,
  }
}

function postgres16(db) {
  return postgresClient({
    host: PG.host,
    port: PG.port,
    user: PG.user,
    database: db,
    max: 16,
    onnotice: () => {},
    connection: { application_name: 'iddqueue-bench' },
  })
}

WORKLOADS['producers-1'] = (db) => produce(db, 1)
WORKLOADS['producers-16'] = (db) => produce(db, 16)
WORKLOADS['producers-64'] = (db) => produce(db, 64)
WORKLOADS['insert-plain-16'] = (db) => plainInserts(db, false)
WORKLOADS['insert-notify-16'] = (db) => plainInserts(db, true)
WORKLOADS['effect-tx'] = (db) => effects(db, true)
WORKLOADS['effect-ack'] = (db) => effects(db, false)

// Issue 14: @iddqueue/scheduler's occurrence-to-enqueue lag beside a bare-timer
// baseline, then the statements its loop sends while idle (lib/schedule-lag.mjs,
// also run by hand as ../schedule-lag.mjs). The line's p50/p99/max are the
// scheduler's lag; the baseline and the idle figures are nested. Imported
// here, not above: it loads the workspace builds, which the other workloads
// must not depend on (run.mjs measures a snapshot of core).
WORKLOADS['schedule-lag'] = async (db) => {
  const { scheduleLag } = await import('./schedule-lag.mjs')
  const everyMs = Number(process.env.BENCH_SCHEDULE_EVERY_MS || 100)
  const limitMs = Number(process.env.BENCH_SCHEDULE_LAG_MS || Math.min(LIMIT_MS, 20_000))
  const idleMs = Number(process.env.BENCH_SCHEDULE_IDLE_MS ?? 30_000)
  const r = await scheduleLag(db, { everyMs, limitMs, idleMs })
  return {
    jobs: r.scheduler.n,
    completed: r.scheduler.n,
    seconds: limitMs / 1_000,
    p50_ms: r.scheduler.p50_ms,
    p99_ms: r.scheduler.p99_ms,
    max_ms: r.scheduler.max_ms,
    ...r,
    config_override: `startScheduler() with its defaults (safety poll 60 s), one schedule every ${everyMs} ms for ${limitMs} ms; idle window ${idleMs} ms; workspace builds of @iddqueue/core and @iddqueue/scheduler`,
  }
}

const EFFECT_JOBS = 10_000

/**
 * Transactional actors (issue 16): 10,000 queued messages of an actor that
 * inserts one row each, drained by one worker; `transactional`: the insert
 * commits with the acknowledgement, else it autocommits and the normal
 * batched acknowledgement follows. Clock: worker start until every message
 * is done and every row is there.
 */
async function effects(db, transactional) {
  const p = await adapter.producer(connString(db), 'default')
  await prefill(p, EFFECT_JOBS, now() + LIMIT_MS)
  await p.close()
  const mon = client(db)
  await mon`create table bench_effects (message_id uuid not null)`
  await settle(db, { vacuum: true })
  const remaining = async () =>
    (await mon.unsafe(adapter.sql.remaining))[0].n +
    EFFECT_JOBS -
    (await mon`select count(*)::int as n from bench_effects`)[0].n
  const t0 = now()
  const deadlineAt = t0 + LIMIT_MS
  const w = await adapter.startEffectWorker(connString(db), transactional, () => {})
  let timeout = false
  let left = await remaining()
  while (left > 0) {
    if (now() > deadlineAt) {
      timeout = true
      break
    }
    await sleep(5)
    left = await remaining()
  }
  const secs = (now() - t0) / 1000
  await w.stop()
  await mon.end({ timeout: 5 })
  return {
    jobs: EFFECT_JOBS,
    completed: EFFECT_JOBS - Math.max(0, left),
    seconds: secs,
    timeout,
    concurrency: adapter.EFFECT_CONCURRENCY,
    jobs_per_s_override: (EFFECT_JOBS - Math.max(0, left)) / secs,
  }
}

/** What keeps the event loop alive, for the report when the child does not exit on its own. */
function describeHandles() {
  const out = []
  for (const h of process._getActiveHandles()) {
    const kind = h?.constructor?.name ?? typeof h
    if (kind === 'Socket' || kind === 'TLSSocket') {
      if (h === process.stdout || h === process.stderr || h === process.stdin) continue
      out.push(
        `${kind} ${h.localPort ?? '?'}->${h.remoteAddress ?? '?'}:${h.remotePort ?? '?'} destroyed=${h.destroyed} readyState=${h.readyState}`,
      )
    } else if (kind === 'Timeout') {
      out.push(
        `Timeout ${h._idleTimeout} ms repeat=${h._repeat != null} hasRef=${h.hasRef?.()} fn=${h._onTimeout?.name || '(anonymous)'}: ${String(h._onTimeout).slice(0, 160).replace(/\s+/g, ' ')}`,
      )
    } else {
      out.push(kind)
    }
  }
  return { handles: out, resources: process.getActiveResourcesInfo() }
}

// ---- main -------------------------------------------------------------------
const wl = a.workload
if (!WORKLOADS[wl]) throw new Error(`unknown workload ${wl}`)
const out = {
  system: adapter.name,
  version: adapter.version,
  variant: a.variant,
  workload: wl,
  run: Number(a.run),
  node: process.version,
  ...(a.commit ? { commit: a.commit } : {}),
  ...(a.build ? { build: a.build } : {}),
}
// Another system's drain-processes line gets its config from lib/scale.mjs (config_override).
let config =
  a.system !== 'iddqueue'
    ? null
    : wl.startsWith('drain') || wl === 'latency'
      ? adapter.describe(a.variant)
      : 'producer API only'
let r
await createDb(a.db)
try {
  r = await WORKLOADS[wl](a.db)
} catch (e) {
  r = { error: String(e?.stack ?? e) }
} finally {
  try {
    await dropDb(a.db)
  } catch (e) {
    process.stderr.write(`[child] drop failed: ${e}\n`)
  }
}
if (r.config_override) {
  config = r.config_override
  delete r.config_override
}
const jps =
  r.jobs_per_s_override ?? (r.completed != null && r.seconds ? r.completed / r.seconds : null)
delete r.jobs_per_s_override
const line = {
  ...out,
  jobs: r.jobs ?? null,
  seconds: null,
  jobs_per_s: null,
  p50_ms: null,
  p99_ms: null,
  rss_mb: rssMb(),
  ...r,
  config,
}
line.jobs_per_s = round(jps, 1)
for (const k of ['seconds']) line[k] = round(line[k], 3)
for (const k of ['p50_ms', 'p90_ms', 'p99_ms', 'max_ms', 'mean_ms', 'startup_ms', 'stop_ms'])
  if (k in line) line[k] = round(line[k], 2)
process.stdout.write(JSON.stringify(line) + '\n')
// Everything has been closed; the process should now exit on its own. If some
// handle keeps it alive, say which and force the exit (exit code 3 is reported).
setTimeout(() => {
  process.stderr.write(
    `[child] still alive 2 s after finishing: ${JSON.stringify(describeHandles())}\n`,
  )
}, 2_000).unref()
setTimeout(() => {
  process.stderr.write(
    `[child] event loop still busy 15 s after finishing; forcing exit. Alive: ${JSON.stringify(describeHandles())}\n`,
  )
  process.exit(3)
}, 15_000).unref()
process.exitCode = r.error ? 1 : 0
