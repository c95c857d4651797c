// One graphile-worker process of the scaling drain (lib/scale.mjs), the peer
// of lib/scale-worker.mjs: graphile-worker from the peers' harness install
// (BENCH_PEERS_DIR), task `noop`, the peers' default or tuned settings with the
// concurrency it is given (pool max(10, concurrency + 2), as graphile-worker's
// docs recommend), "ready" on stdout once started, a graceful stop on SIGTERM.
// Usage: BENCH_PEERS_DIR=... node scale-graphile-worker.mjs URL CONCURRENCY VARIANT
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const peers = process.env.BENCH_PEERS_DIR
const require = createRequire(join(peers, 'package.json'))
const { run, Logger } = await import(pathToFileURL(require.resolve('graphile-worker')).href)
const [url, concurrency, variant] = process.argv.slice(2)
const c = Number(concurrency)
const tuned = { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 }
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning')
    process.stderr.write(`[graphile-worker ${level}] ${message}\n`)
})
const runner = await run({
  noHandleSignals: true,
  taskList: { noop: async () => {} },
  parsedCronItems: [],
  preset: {
    worker: {
      connectionString: url,
      logger,
      concurrentJobs: c,
      maxPoolSize: Math.max(10, c + 2),
      ...(variant === 'tuned' ? tuned : {}),
    },
  },
})
process.once('SIGTERM', async () => {
  await runner.stop()
  process.exit(0) // graphile-worker's pool may keep the loop alive a moment longer
})
process.stdout.write('ready\n')
