#!/usr/bin/env node
// Occurrence-to-enqueue lag of @iddqueue/scheduler: one schedule every
// --every-ms (default 100) run by startScheduler() in this process, for
// BENCH_LIMIT_MS (default 20 s here). Lag = the moment the tick's
// transaction has committed (Date.now() in onTick) minus the occurrence's
// intended time (PostgreSQL's clock; PostgreSQL runs on this machine, so
// both read the same system clock). In the same invocation, a baseline: a
// bare setTimeout aimed at each intended time that then commits one insert
// (the floor any timer-driven scheduler on this machine pays). Also reports
// the transactions the database counted per occurrence (pg_stat_database).
//
//   flock /tmp/iddqueue-bench.lock node schedule-lag.mjs [--every-ms 100]
import { parseArgs } from 'node:util'
import { createBroker } from '@iddqueue/core'
import { createScheduler, scheduler, startScheduler } from '@iddqueue/scheduler'
import { client, connString, createDb, dropDb } from './lib/common.mjs'

const { values } = parseArgs({ options: { 'every-ms': { type: 'string', default: '100' } } })
const EVERY_MS = Number(values['every-ms'])
const LIMIT_MS = Number(process.env.BENCH_LIMIT_MS || 20_000)

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

async function xacts(admin) {
  const [row] =
    await admin`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`
  return Number(row.n)
}

async function schedulerLag(db) {
  const broker = createBroker({ url: connString(db), plugins: [scheduler()] })
  const admin = client(db)
  try {
    await broker.migrate()
    await createScheduler(broker).create({ name: 'lag', actor: 'noop', everyMs: EVERY_MS })
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
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const before = await xacts(admin)
    const published = lags.length
    await new Promise((resolve) => setTimeout(resolve, LIMIT_MS))
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

async function baselineLag(db) {
  const sql = client(db)
  try {
    await sql`create table ticks (at timestamptz not null)`
    const [row] =
      await sql`select floor(extract(epoch from clock_timestamp()) * 1000)::float8 as now`
    let intended = Number(row.now) + EVERY_MS
    const lags = []
    const deadline = Date.now() + LIMIT_MS
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, intended - Date.now())))
      await sql.begin((tx) => tx`insert into ticks (at) values (now())`)
      lags.push(Date.now() - intended)
      intended += EVERY_MS
      while (intended < Date.now()) intended += EVERY_MS
    }
    return stats(lags)
  } finally {
    await sql.end()
  }
}

const db = `bench_schedule_lag_${process.pid}`
await createDb(db)
try {
  const baseline = await baselineLag(db)
  const scheduled = await schedulerLag(db)
  const result = {
    workload: 'schedule-lag',
    every_ms: EVERY_MS,
    limit_ms: LIMIT_MS,
    scheduler: scheduled,
    baseline,
    p50_ratio: scheduled.p50_ms / Math.max(baseline.p50_ms, 1),
    p99_ratio: scheduled.p99_ms / Math.max(baseline.p99_ms, 1),
  }
  console.log(JSON.stringify(result))
} finally {
  await dropDb(db)
}
