// Occurrence-to-enqueue lag of @iddqueue/scheduler, and the statements its
// loop sends while idle. Used by ../schedule-lag.mjs (by hand) and by the
// `schedule-lag` workload of ../run.mjs (lib/child.mjs), in a database the
// caller created.
//
// Lag: one schedule every `everyMs` run by startScheduler() in this process
// for `limitMs`. Lag = the moment the tick's transaction has committed
// (Date.now() in onTick) minus the occurrence's intended time (PostgreSQL's
// clock; PostgreSQL runs on this machine, so both read the same system
// clock). Before it, a baseline: a bare setTimeout aimed at each intended
// time that then commits one insert (the floor any timer-driven scheduler on
// this machine pays). Also the transactions the database counted per
// occurrence (pg_stat_database).
//
// Idle (when `idleMs` > 0): one schedule whose next run is an hour away and
// the loop's default safety poll (60 s); every statement the scheduler's
// broker sends during `idleMs` after its first tick is counted through a
// postgres.js `debug` hook, beside the database's transaction count
// (pg_stat_database, which also sees autovacuum, and the two reads of it
// once their statistics are flushed).
//
// It imports the workspace's builds of @iddqueue/core and @iddqueue/scheduler
// (not run.mjs's snapshot of core): build them first.
import { createBroker } from '@iddqueue/core'
import { createScheduler, scheduler, startScheduler } from '@iddqueue/scheduler'
import postgres from 'postgres'
import { client, connString } from './common.mjs'

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
function stats(lags) {
  const sorted = [...lags].sort((a, b) => a - b)
  return {
    n: sorted.length,
    p50_ms: quantile(sorted, 0.5),
    p99_ms: quantile(sorted, 0.99),
    max_ms: sorted.at(-1),
  }
}

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function xacts(admin) {
  const [row] =
    await admin`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`
  return Number(row.n)
}

async function schedulerLag(db, everyMs, limitMs) {
  const broker = createBroker({ url: connString(db), plugins: [scheduler()] })
  const admin = client(db)
  try {
    await broker.migrate()
    await createScheduler(broker).create({ name: 'lag', actor: 'noop', everyMs })
    const lags = []
    let first = true
    const running = startScheduler({
      broker,
      onTick: (result) => {
        const at = Date.now()
        for (const o of result.published) {
          // The first occurrence is due at creation, before the loop started.
          if (first) first = false
          else lags.push(at - o.intendedAt.getTime())
        }
      },
    })
    await wait(1_000)
    const before = await xacts(admin)
    const published = lags.length
    await wait(limitMs)
    const after = await xacts(admin)
    const occurrences = lags.length - published
    await running.stop()
    // Two of the counted transactions are the stats reads themselves.
    return { ...stats(lags), xacts_per_occurrence: (after - before - 2) / occurrences }
  } finally {
    await broker.close()
    await admin.end()
  }
}

async function baselineLag(db, everyMs, limitMs) {
  const sql = client(db)
  try {
    await sql`create table ticks (at timestamptz not null)`
    const [row] =
      await sql`select floor(extract(epoch from clock_timestamp()) * 1000)::float8 as now`
    let intended = Number(row.now) + everyMs
    const lags = []
    const deadline = Date.now() + limitMs
    while (Date.now() < deadline) {
      await wait(Math.max(0, intended - Date.now()))
      await sql.begin((tx) => tx`insert into ticks (at) values (now())`)
      lags.push(Date.now() - intended)
      intended += everyMs
      while (intended < Date.now()) intended += everyMs
    }
    return stats(lags)
  } finally {
    await sql.end()
  }
}

/** Runs after schedulerLag (the schema is migrated). */
async function idleStatements(db, idleMs) {
  const statements = []
  const sql = postgres(connString(db), {
    onnotice: () => {},
    debug: (_connection, query) => statements.push(query),
  })
  const broker = createBroker({ sql, plugins: [scheduler()] })
  const admin = client(db)
  try {
    await admin`delete from iddqueue.schedules`
    await createScheduler(broker).create({ name: 'idle', actor: 'noop', everyMs: 3_600_000 })
    let tickAt = -1
    const running = startScheduler({
      broker,
      onTick: (result) => {
        if (result.published.length > 0 && tickAt < 0) tickAt = statements.length
      },
    })
    // The window opens after the loop's read of the time to sleep, which follows the tick.
    const untilNext = (text) => text.includes('min(next_run_at)')
    const deadline = Date.now() + 30_000
    while (tickAt < 0 || !statements.slice(tickAt).some(untilNext)) {
      if (Date.now() > deadline) throw new Error('idle: the scheduler did not tick within 30 s')
      await wait(5)
    }
    const from = tickAt + statements.slice(tickAt).findIndex(untilNext) + 1
    const before = await xacts(admin)
    await wait(idleMs)
    const after = await xacts(admin)
    const sent = statements.slice(from)
    await running.stop()
    return {
      ms: idleMs,
      statements: sent.length,
      // As the database counted them: every session (autovacuum included),
      // and the two reads of the counter when their stats were flushed in time.
      db_xacts: after - before,
      safety_poll_ms: 60_000,
    }
  } finally {
    await broker.close()
    await sql.end()
    await admin.end()
  }
}

/**
 * The measurement, in database `db` (created and dropped by the caller):
 * the baseline, the scheduler's lag, then (idleMs > 0) the idle statements.
 */
export async function scheduleLag(db, { everyMs = 100, limitMs = 20_000, idleMs = 0 } = {}) {
  const baseline = await baselineLag(db, everyMs, limitMs)
  const scheduled = await schedulerLag(db, everyMs, limitMs)
  const idle = idleMs > 0 ? await idleStatements(db, idleMs) : undefined
  return {
    every_ms: everyMs,
    limit_ms: limitMs,
    scheduler: scheduled,
    baseline,
    p50_ratio: scheduled.p50_ms / Math.max(baseline.p50_ms, 1),
    p99_ratio: scheduled.p99_ms / Math.max(baseline.p99_ms, 1),
    ...(idle ? { idle } : {}),
  }
}
