// Claim-enforced limits benchmark (issue 13): drains the same backlog several
// ways, alternating in ONE invocation, and prints ratios against the plain
// drain measured in the same invocation:
//   plain      @iddqueue/core alone
//   plugin     @iddqueue/coordination installed, no limit configured
//   keyed      a concurrency key on every message (1,000 keys, limit 2 each)
//   global     one actor-wide limit of 16 (the worker's concurrency)
//   rated      a rate key on every message (1,000 keys, 100 per second each: never binding)
// Each variant drains in its own fresh database; worker concurrency 16,
// library defaults otherwise (as W3). Usage, from bench/ with the packages built:
//   flock -x /tmp/iddqueue-load.lock node limits.mjs [--jobs 40000] [--runs 3]
import { parseArgs } from 'node:util'
import { coordination } from '@iddqueue/coordination'
import { createBroker } from '@iddqueue/core'
import postgres from 'postgres'

const { values: a } = parseArgs({
  options: { jobs: { type: 'string', default: '40000' }, runs: { type: 'string', default: '3' } },
})
const JOBS = Number(a.jobs)
const RUNS = Number(a.runs)
const KEYS = 1_000
const CONCURRENCY = 16
const base = `postgres://${process.env.PGUSER ?? 'root'}@${process.env.PGHOST ?? '127.0.0.1'}:${process.env.PGPORT ?? 5432}`
const admin = postgres(`${base}/${process.env.BENCH_ADMIN_DB ?? 'test'}`, {
  max: 1,
  onnotice: () => {},
})
let seq = 0

const VARIANTS = {
  plain: { plugin: false, options: {} },
  plugin: { plugin: true, options: {} },
  keyed: { plugin: true, options: { concurrency: { key: (i) => `k${i % KEYS}`, limit: 2 } } },
  global: { plugin: true, options: { concurrency: { limit: CONCURRENCY } } },
  rated: {
    plugin: true,
    options: { rate: { key: (i) => `k${i % KEYS}`, limit: 100, periodMs: 1_000 } },
  },
}

async function drain(name) {
  const variant = VARIANTS[name]
  const db = `bench_limits_${process.pid}_${seq++}`
  await admin.unsafe(`create database ${db}`)
  const url = `${base}/${db}`
  try {
    const plugins = variant.plugin ? [coordination({ purgeIntervalMs: false })] : []
    const broker = createBroker({ url, plugins })
    await broker.migrate()
    let done = 0
    let resolveAll
    const all = new Promise((resolve) => {
      resolveAll = resolve
    })
    const job = broker.actor(
      'job',
      (_i) => {
        if (++done === JOBS) resolveAll()
      },
      { queue: 'bench', ...variant.options },
    )
    for (let i = 0; i < JOBS; i += 1_000)
      await broker.enqueueMany(
        Array.from({ length: Math.min(1_000, JOBS - i) }, (_, k) => job.message(i + k)),
      )
    const sql = postgres(url, { max: 1, onnotice: () => {} })
    await sql`vacuum analyze`
    await sql.end()
    const worker = broker.worker({ queues: ['bench'], concurrency: CONCURRENCY })
    const t0 = performance.now()
    await worker.start()
    await all
    await broker.join({ queues: ['bench'], timeoutMs: 120_000 })
    const seconds = (performance.now() - t0) / 1000
    await worker.stop()
    await broker.close()
    return JOBS / seconds
  } finally {
    await admin.unsafe(`drop database if exists ${db} with (force)`)
  }
}

const rates = Object.fromEntries(Object.keys(VARIANTS).map((name) => [name, []]))
for (let run = 0; run < RUNS; run++) {
  // plain twice, around the others: the ratios use their mean, which cancels some drift.
  for (const name of (process.env.LIM_VARIANTS ?? 'plain,plugin,keyed,global,rated,plain').split(
    ',',
  )) {
    const rate = await drain(name)
    rates[name].push(rate)
    console.log(`run ${run + 1} ${name}: ${rate.toFixed(0)} jobs/s`)
  }
}
await admin.end()
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length
const plain = mean(rates.plain)
console.log(
  JSON.stringify({
    jobs: JOBS,
    runs: RUNS,
    jobs_per_s: Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, Math.round(mean(v))])),
    ratio_to_plain: Object.fromEntries(
      Object.entries(rates).map(([k, v]) => [k, Number((mean(v) / plain).toFixed(3))]),
    ),
  }),
)
