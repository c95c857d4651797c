#!/usr/bin/env node
// Claim cost with retained finished rows: W3 (drain 50,000 at concurrency 16,
// library defaults) on a fresh table, then on one that also holds N done
// rows of the same queue (default 1,000,000), each in its own database, in
// one invocation. Also times 500-row claims with EXPLAIN ANALYZE (median of 5).
//
//   node retained.mjs [--retained 1000000] [--runs 2]
import { parseArgs } from 'node:util'
import { createBroker } from '@iddqueue/core'
import { client, connString, createDb, dropDb, now, sleep } from './lib/common.mjs'

const { values } = parseArgs({
  options: {
    retained: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '2' },
  },
})
const RETAINED = Number(values.retained)
const JOBS = 50_000

async function measure(retained, run) {
  const db = `bench_retained_${process.pid}_${retained}_${run}`
  await createDb(db)
  const admin = client(db)
  const broker = createBroker({ url: connString(db) })
  try {
    await broker.migrate()
    if (retained > 0) {
      await admin.unsafe(`insert into iddqueue.messages (id, queue, actor, state, args, updated_at, worker_id)
        select gen_random_uuid(), 'default', 'noop', 'done', jsonb_build_array(i), now() - interval '1 day', gen_random_uuid()
          from generate_series(1, ${retained}) i`)
    }
    let started = 0
    const noop = broker.actor('noop', async () => {
      started++
    })
    for (let i = 0; i < JOBS; i += 1000) {
      await broker.enqueueMany(Array.from({ length: 1000 }, (_, k) => noop.message({ i: i + k })))
    }
    await admin.unsafe('vacuum (analyze) iddqueue.messages')
    await admin.unsafe('checkpoint').catch(() => {})
    // Claims of 500 inside rolled-back transactions: plan and median execution time of five.
    const claim = broker.context.statements.claimOne
      .replaceAll('$1::text', "'default'")
      .replace('$2', '500')
      .replace('$3', "'00000000-0000-0000-0000-000000000001'")
    const plans = []
    for (let i = 0; i < 5; i++) {
      plans.push(
        await admin
          .begin(async (tx) => {
            const rows = await tx.unsafe(`explain (analyze, format json) ${claim}`)
            throw Object.assign(new Error('rollback'), { plan: rows[0]['QUERY PLAN'][0] })
          })
          .catch((error) => error.plan),
      )
    }
    const claimMs = plans.map((p) => p['Execution Time']).sort((a, b) => a - b)[2]
    const plan = plans[0]
    const worker = broker.worker({ concurrency: 16 })
    const t0 = now()
    await worker.start()
    for (;;) {
      const [row] =
        await admin`select count(*)::int as n from iddqueue.messages where state <> 'done'`
      if (row.n === 0 && started >= JOBS) break
      await sleep(5)
    }
    const seconds = (now() - t0) / 1000
    await worker.stop()
    return {
      workload: 'drain-with-retained-rows',
      retained,
      run,
      jobs: JOBS,
      seconds: +seconds.toFixed(3),
      jobs_per_s: Math.round(JOBS / seconds),
      claim_500_ms: +claimMs.toFixed(2),
      claim_plan: plan.Plan.Plans?.[0]?.Plans?.[0]?.['Node Type'] ?? plan.Plan['Node Type'],
    }
  } finally {
    await broker.close()
    await admin.end()
    await dropDb(db)
  }
}

const lines = []
for (let run = 1; run <= Number(values.runs); run++) {
  for (const retained of [0, RETAINED]) {
    const line = await measure(retained, run)
    lines.push(line)
    console.log(JSON.stringify(line))
  }
}
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]
const at = (r, k) => median(lines.filter((l) => l.retained === r).map((l) => l[k]))
console.error(`| retained done rows | drain jobs/s | one 500-row claim (ms) |\n|---|---|---|`)
for (const r of [0, RETAINED])
  console.error(`| ${r.toLocaleString('en')} | ${at(r, 'jobs_per_s')} | ${at(r, 'claim_500_ms')} |`)
console.error(
  `ratio with/without: drain ${(at(RETAINED, 'jobs_per_s') / at(0, 'jobs_per_s')).toFixed(2)}, claim ${(at(RETAINED, 'claim_500_ms') / at(0, 'claim_500_ms')).toFixed(2)}`,
)
