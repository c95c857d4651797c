// The three systems of multiqueue-peers.mjs (issue 20: the peers in the
// several-queues shape), each as { name, version, describe, producer(url, queues),
// startWorker(url, queues, onJob), remaining }:
//   iddqueue         actors noop_<i> on queues q_<i>, one worker (concurrency
//                    16, defaults) consuming every declared queue (lib/adapter.mjs).
//   graphile-worker  task identifiers noop_<i>, one runner whose taskList has
//                    them all, with the peers harness's `tuned` settings.
//   pg-boss          queues q_<i>, the harness's `tuned` work() loops (16 x
//                    batchSize 500, pollingIntervalSeconds 0.5) dealt round-robin
//                    over the queues, at least one per queue, on one PgBoss.
// Peer libraries and settings come from the peers' install (BENCH_PEERS_DIR,
// prepared by lib/externals.mjs): the harness's adapter modules are imported
// for their `variants`, so the settings are the harness's own, not a copy.
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import * as adapter from './adapter.mjs'

const CONCURRENCY = 16
// The harness's pg-boss pool (its adapter's POOL, not exported): graphile-worker's 16 + 2.
const PGBOSS_POOL = 18

const peersDir = () => {
  const dir = process.env.BENCH_PEERS_DIR
  if (!dir) throw new Error('BENCH_PEERS_DIR is not set (multiqueue-peers.mjs sets it)')
  return dir
}
const harnessAdapter = (file) =>
  import(pathToFileURL(join(peersDir(), 'lib', 'adapters', file)).href)
const peerModule = (name) => {
  const require = createRequire(join(peersDir(), 'package.json'))
  return import(pathToFileURL(require.resolve(name)).href)
}

async function iddqueue() {
  return {
    name: 'iddqueue',
    version: adapter.version,
    variant: 'default',
    describe: (queues) =>
      `${queues} actor(s) noop_<i> on queue(s) q_<i>; one worker, concurrency ${CONCURRENCY}, defaults (${adapter.describe('default')})`,
    producer: adapter.multiProducer,
    startWorker: adapter.startMultiWorker,
    remaining: () => adapter.multiSql.remaining,
  }
}

async function graphileWorker(variant) {
  const h = await harnessAdapter('graphile-worker.mjs')
  const cfg = h.variants[variant]
  if (!cfg) throw new Error(`graphile-worker: unknown variant ${variant}`)
  const { run, makeWorkerUtils, Logger } = await peerModule('graphile-worker')
  const logger = new Logger(() => (level, message) => {
    if (level === 'error' || level === 'warning')
      process.stderr.write(`[graphile-worker ${level}] ${message}\n`)
  })
  const task = (i) => `noop_${i}`
  return {
    name: h.name,
    version: h.version,
    variant,
    describe: (queues) =>
      `${queues} task identifier(s) noop_<i> in one runner's taskList; ${h.describe(variant)}`,
    async producer(connectionString, queues) {
      const utils = await makeWorkerUtils({ connectionString, logger })
      await utils.migrate()
      let next = 0
      return {
        addBatch: (payloads) =>
          utils.addJobs(
            payloads.map((payload) => ({ identifier: task(next++ % queues), payload })),
          ),
        close: () => utils.release(),
      }
    },
    async startWorker(connectionString, queues, onJob) {
      const taskList = {}
      for (let i = 0; i < queues; i++)
        taskList[task(i)] = async (payload) => {
          onJob(payload)
        }
      const runner = await run({
        noHandleSignals: true,
        taskList,
        parsedCronItems: [],
        preset: { worker: { connectionString, logger, ...cfg } },
      })
      return { stop: () => runner.stop() }
    },
    // Completed jobs are deleted: what is left is not done.
    remaining: () => h.sql.remaining,
  }
}

async function pgBoss(variant) {
  const h = await harnessAdapter('pg-boss.mjs')
  const cfg = h.variants[variant]
  if (!cfg) throw new Error(`pg-boss: unknown variant ${variant}`)
  const mod = await peerModule('pg-boss')
  const PgBoss = mod.default ?? mod
  const queueName = (i) => `q_${i}`
  const start = async (connectionString) => {
    // As the harness's startBoss: everything but the pool left at defaults.
    const boss = new PgBoss({ connectionString, max: PGBOSS_POOL })
    boss.on('error', (e) => process.stderr.write(`[pg-boss error] ${e?.message ?? e}\n`))
    await boss.start()
    return boss
  }
  /** How many of the variant's work() loops each queue gets: round-robin, at least one each. */
  const loops = (queues) => {
    const n = Array(queues).fill(0)
    for (let k = 0; k < Math.max(cfg.workers, queues); k++) n[k % queues]++
    return n
  }
  return {
    name: h.name,
    version: h.version,
    variant,
    describe: (queues) =>
      `${queues} queue(s) q_<i>, ${cfg.workers} work() loops dealt round-robin over them (${loops(queues).join('/')}) on one PgBoss; ${h.describe(variant)}`,
    async producer(connectionString, queues) {
      const boss = await start(connectionString)
      for (let i = 0; i < queues; i++) await boss.createQueue(queueName(i))
      let next = 0
      return {
        addBatch: (payloads) =>
          boss.insert(payloads.map((data) => ({ name: queueName(next++ % queues), data }))),
        close: () => boss.stop({ graceful: true, wait: true }),
      }
    },
    async startWorker(connectionString, queues, onJob) {
      const boss = await start(connectionString)
      const perQueue = loops(queues)
      for (let i = 0; i < queues; i++)
        for (let k = 0; k < perQueue[i]; k++)
          await boss.work(queueName(i), cfg.options, async (jobs) => {
            for (const job of jobs) onJob(job.data)
          })
      return { stop: () => boss.stop({ graceful: true, wait: true }) }
    },
    remaining: (queues) =>
      `select count(*)::int as n from pgboss.job where name = any(array[${Array.from(
        { length: queues },
        (_, i) => `'${queueName(i)}'`,
      ).join(',')}]) and state < 'completed'`,
  }
}

/** The system named `system` in `variant` (iddqueue has only `default`). */
export function multiQueueSystem(system, variant) {
  if (system === 'iddqueue') return iddqueue()
  if (system === 'graphile-worker') return graphileWorker(variant)
  if (system === 'pg-boss') return pgBoss(variant)
  throw new Error(`multiqueue-peers: unknown system ${system}`)
}
