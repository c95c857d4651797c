#!/usr/bin/env node
// Occurrence-to-enqueue lag of @iddqueue/scheduler by hand: one schedule
// every --every-ms (default 100) for BENCH_LIMIT_MS (default 20 s here),
// beside a bare-timer baseline, then (--idle-ms, default 0 = skipped) the
// statements the scheduler sends while idle. One JSON line on stdout. The
// measurement is lib/schedule-lag.mjs, which `node run.mjs --workload
// schedule-lag` (pnpm bench) runs too.
//
//   flock /tmp/iddqueue-bench.lock node schedule-lag.mjs [--every-ms 100] [--idle-ms 30000]
import { parseArgs } from 'node:util'
import { createDb, dropDb } from './lib/common.mjs'
import { scheduleLag } from './lib/schedule-lag.mjs'

const { values } = parseArgs({
  options: {
    'every-ms': { type: 'string', default: '100' },
    'idle-ms': { type: 'string', default: '0' },
  },
})

const db = `bench_schedule_lag_${process.pid}`
await createDb(db)
try {
  const result = await scheduleLag(db, {
    everyMs: Number(values['every-ms']),
    limitMs: Number(process.env.BENCH_LIMIT_MS || 20_000),
    idleMs: Number(values['idle-ms']),
  })
  console.log(JSON.stringify({ workload: 'schedule-lag', ...result }))
} finally {
  await dropDb(db)
}
