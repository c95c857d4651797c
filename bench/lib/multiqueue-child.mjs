// One drain of multiqueue-peers.mjs in its own process and database: JOBS
// no-op jobs ({i}) spread round-robin over QUEUES queues (task identifiers
// for graphile-worker), added in awaited batches of 1,000 (untimed), then
// VACUUM (ANALYZE) + CHECKPOINT, then one worker over all of them. The clock
// runs as W3's (lib/child.mjs): from the call that starts the worker until
// every handler has been entered and a separate connection, polling every
// 5 ms, sees no job left undone. Prints one JSON line and exits.
// Usage: BENCH_PEERS_DIR=... node multiqueue-child.mjs --system S --variant V --queues N --db DB [--jobs 50000] [--run 1]
import { parseArgs } from 'node:util'
import { client, connString, LIMIT_MS, now, round, rssMb, settle, timeDrain } from './common.mjs'
import { multiQueueSystem } from './multiqueue-systems.mjs'

const { values: a } = parseArgs({
  options: {
    system: { type: 'string' },
    variant: { type: 'string', default: 'default' },
    queues: { type: 'string' },
    jobs: { type: 'string', default: '50000' },
    run: { type: 'string', default: '1' },
    db: { type: 'string' },
  },
})
const queues = Number(a.queues)
const jobs = Number(a.jobs)
const CHUNK = 1_000

async function drain(sys, db) {
  const url = connString(db)
  const p = await sys.producer(url, queues)
  const prefillDeadline = now() + LIMIT_MS
  for (let i = 0; i < jobs; i += CHUNK) {
    if (now() > prefillDeadline) throw new Error(`prefill exceeded ${LIMIT_MS} ms`)
    await p.addBatch(Array.from({ length: Math.min(CHUNK, jobs - i) }, (_, k) => ({ i: i + k })))
  }
  await p.close()
  await settle(db, { vacuum: true })
  const mon = client(db)
  const remainingSql = sys.remaining(queues)
  const remaining = async () => (await mon.unsafe(remainingSql))[0].n
  const queued = await remaining()
  if (queued !== jobs) throw new Error(`prefill left ${queued} jobs to do, not ${jobs}`)

  const d = await timeDrain({
    jobs,
    start: (onJob) => sys.startWorker(url, queues, onJob),
    remaining,
    mon,
  })
  return {
    jobs,
    completed: d.completed,
    handler_calls: d.handlerCalls,
    seconds: round(d.seconds),
    jobs_per_s: round(d.completed / d.seconds, 0),
    timeout: d.timeout,
    startup_ms: round(d.startupMs, 1),
    stop_ms: round(d.stopMs, 1),
  }
}

const base = {
  system: a.system,
  variant: a.variant,
  workload: 'drain-multiqueue',
  queues,
  run: Number(a.run),
  node: process.version,
}
let line
try {
  const sys = await multiQueueSystem(a.system, a.variant)
  Object.assign(base, { version: sys.version, config: sys.describe(queues) })
  line = { ...base, ...(await drain(sys, a.db)), rss_mb: rssMb() }
} catch (e) {
  line = { ...base, error: String(e?.stack ?? e) }
}
process.stdout.write(`${JSON.stringify(line)}\n`)
// Peer pools may keep the event loop alive a while after stopping; the line is out.
process.exit(line.error ? 1 : 0)
