// iddqueue adapter, same shape as shared/bench/peers/lib/adapters/*.mjs.
// All jobs are messages of actor "noop" on queue "default" in the default
// "iddqueue" schema of the per-run database.
//
// Settings: worker concurrency 16 (as every peer) and iddqueue's defaults for
// everything else: prefetch 'auto', pollIntervalMs 5000, LISTEN/NOTIFY wake-ups,
// settle batching (settleBatchSize 1000), heartbeat 2 s + recovery sweep,
// hourly purge, consoleLogger('warn'), the default middleware, and whatever
// else the measured commit defaults to (e.g. currentMessage is opt-in since
// f97ca24; claims/acks commit asynchronously since 363f4ca; see README.md).
//
// Connection budget: every peer gets a pool of 18 (graphile-worker
// maxPoolSize, pg-boss max, BullMQ pg.Pool max). iddqueue runs with its
// DEFAULT poolSize, 10, because 18 gave the same figures here (W3 drain and
// W4 latency alternated 10/18 on this machine: differences inside the noise;
// a worker with no-op handlers has at most one claim, two settle statements
// and a heartbeat in flight, so 10 connections are never the limit). So
// iddqueue works with fewer connections than the peers, not more. postgres.js
// opens LISTEN on its own dedicated connection outside the pool (sql.listen),
// so a worker holds poolSize + 1 (like pg-boss 12 tuned's 18 + 1).
// IDDQUEUE_BENCH_POOL=18 runs with the peers' budget instead.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

// run.mjs snapshots the built @iddqueue/core (and @iddqueue/schema) at start and
// passes its entry here, so that a rebuild of packages/* by someone else during
// a long run cannot change (or break) what is measured half-way. Without it
// (child.mjs run by hand) the workspace's build is used.
const require = createRequire(import.meta.url)
const SNAPSHOT = process.env.IDDQUEUE_BENCH_CORE // path of a copied dist/index.js
const coreEntry = SNAPSHOT ? pathToFileURL(SNAPSHOT).href : '@iddqueue/core'
const corePkg = SNAPSHOT
  ? join(dirname(SNAPSHOT), '..', 'package.json')
  : require.resolve('@iddqueue/core/package.json')
const { createBroker } = await import(coreEntry)
const ACTOR = 'noop'
const QUEUE = 'default'
const CONCURRENCY = 16
const POOL = process.env.IDDQUEUE_BENCH_POOL ? Number(process.env.IDDQUEUE_BENCH_POOL) : undefined // undefined = default 10

export const name = 'iddqueue'
export const version = JSON.parse(readFileSync(corePkg, 'utf8')).version

// iddqueue has no tuned variant: 'default' is its defaults; 'delete' changes
// one broker option, deleteOnSuccess (successful messages are deleted, as
// graphile-worker does, instead of kept done for the 30-day retention).
export const variants = {
  default: { broker: {}, worker: { concurrency: CONCURRENCY } },
  delete: { broker: { deleteOnSuccess: true }, worker: { concurrency: CONCURRENCY } },
}

export const describe = (variant) => {
  if (!variants[variant]) throw new Error(`unknown variant ${variant}`)
  return `worker concurrency ${CONCURRENCY}, ${variant === 'delete' ? 'deleteOnSuccess: true, ' : ''}library defaults otherwise (prefetch auto, LISTEN/NOTIFY, settle batching), ${POOL === undefined ? 'poolSize default (10)' : `poolSize ${POOL} (default 10)`} + 1 LISTEN connection`
}

export const sql = {
  total: `select count(*)::int as n from iddqueue.messages where queue = '${QUEUE}'`,
  // Not yet completed = any message not in state 'done' (kept by default, deleted by the 'delete' variant).
  remaining: `select count(*)::int as n from iddqueue.messages where queue = '${QUEUE}' and state <> 'done'`,
}

// A/B of claim statements without a rebuild (ab.mjs `name=claim:FILE`): a
// module exporting `claimSql(ns, queueCount)` and `nextEtaSql(ns)` replaces
// the broker's claim statements before its worker starts.
const CLAIM = process.env.IDDQUEUE_BENCH_CLAIM
  ? await import(pathToFileURL(process.env.IDDQUEUE_BENCH_CLAIM).href)
  : null

const open = (connectionString, options = {}) => {
  const broker = createBroker({
    url: connectionString,
    ...(POOL === undefined ? {} : { poolSize: POOL }),
    ...options,
  })
  if (CLAIM) {
    const st = broker.context.statements
    const ns = broker.context.ns
    Object.assign(st, {
      claimOne: CLAIM.claimSql(ns, 1),
      claimMany: CLAIM.claimSql(ns, 2),
      nextEta: CLAIM.nextEtaSql(ns),
    })
  }
  return broker
}

/** Producer: migrates the schema (untimed), then exposes the enqueue APIs. */
export async function producer(connectionString) {
  const broker = open(connectionString)
  await broker.migrate()
  const noop = broker.actor(ACTOR, async () => {})
  return {
    addBatch: (payloads) => broker.enqueueMany(payloads.map((payload) => noop.message(payload))),
    addOne: (payload) => noop.send(payload),
    close: () => broker.close(),
  }
}

/** In-process worker. onJob(payload) is called synchronously at handler entry. */
export async function startWorker(connectionString, variant, onJob) {
  const cfg = variants[variant]
  if (!cfg) throw new Error(`unknown variant ${variant}`)
  const broker = open(connectionString, cfg.broker)
  const noop = broker.actor(ACTOR, async (payload) => {
    onJob(payload)
  })
  const worker = broker.worker(cfg.worker)
  await worker.start()
  return {
    // W4 enqueues through the worker's own broker (like runner.addJob / boss.send).
    addOne: (payload) => noop.send(payload),
    stop: async () => {
      await worker.stop()
      await broker.close()
    },
  }
}

// ---- shapes beyond the peers' four workloads (issue 20) -----------------------
// N queues: actor `noop_<i>` on queue `q_<i>`, every message sent round-robin
// across them; the worker consumes every declared actor's queue (its default).

/** Producer over `queues` queues; `addBatch(payloads, {priority, delayMs})` spreads a batch round-robin. */
export async function multiProducer(connectionString, queues) {
  const broker = open(connectionString)
  await broker.migrate()
  const actors = Array.from({ length: queues }, (_, i) =>
    broker.actor(`noop_${i}`, async () => {}, { queue: `q_${i}` }),
  )
  let next = 0
  return {
    addBatch: (payloads, { priority, delayMs } = {}) =>
      broker.enqueueMany(
        payloads.map((payload) => {
          const message = actors[next++ % queues].messageWithOptions({ args: [payload], priority })
          return delayMs === undefined ? message : { message, delayMs }
        }),
      ),
    addOne: (payload) => actors[next++ % queues].send(payload),
    close: () => broker.close(),
  }
}

/** A worker (concurrency 16, defaults) over the `queues` queues of `multiProducer`. */
export async function startMultiWorker(connectionString, queues, onJob) {
  const broker = open(connectionString)
  for (let i = 0; i < queues; i++)
    broker.actor(`noop_${i}`, async (payload) => onJob(payload), { queue: `q_${i}` })
  const worker = broker.worker({ concurrency: CONCURRENCY })
  await worker.start()
  return {
    stop: async () => {
      await worker.stop()
      await broker.close()
    },
  }
}

/** Producers only: `producers` brokers' worth of concurrent single sends on one broker (pool 10 by default). */
export async function singleSender(connectionString, poolSize) {
  const broker = createBroker({ url: connectionString, poolSize })
  await broker.migrate()
  const noop = broker.actor(ACTOR, async () => {})
  return { addOne: (payload) => noop.send(payload), close: () => broker.close() }
}

export const multiSql = {
  // Due messages not yet done (delayed ones stay queued and are not part of the drain).
  remaining: `select count(*)::int as n from iddqueue.messages where state <> 'done' and eta <= now()`,
  total: `select count(*)::int as n from iddqueue.messages`,
}

// ---- transactional actors (issue 16) -------------------------------------------
// One actor whose handler inserts one row per message into bench_effects: in
// its transaction with the acknowledgement (`transactional: true`), or as an
// autocommitted insert followed by the normal batched acknowledgement. Both run
// on one postgres.js pool of 10 given to the broker as `sql` (the insert of the
// second uses it too), worker concurrency 8 (the pool less the 2 a worker keeps).
export const EFFECT_CONCURRENCY = 8

/** In-process worker for the effect workloads. onJob() is called after each insert. */
export async function startEffectWorker(connectionString, transactional, onJob) {
  const { default: postgres } = await import('postgres')
  const pool = postgres(connectionString, { max: 10, onnotice: () => {} })
  const broker = createBroker({ sql: pool })
  const insert = (sql, id) => sql`insert into bench_effects (message_id) values (${id})`
  broker.actor(
    ACTOR,
    transactional
      ? async (_payload, ctx) => {
          await insert(ctx.transaction, ctx.message.id)
          onJob()
        }
      : async (_payload, ctx) => {
          await insert(pool, ctx.message.id)
          onJob()
        },
    { transactional },
  )
  const worker = broker.worker({ concurrency: EFFECT_CONCURRENCY })
  await worker.start()
  return {
    stop: async () => {
      await worker.stop()
      await broker.close()
      await pool.end({ timeout: 5 })
    },
  }
}

/** The broker's claim statements (after migrating), for timing single claims. */
export async function claimStatements(connectionString) {
  const broker = open(connectionString)
  await broker.migrate()
  const { claimOne, claimMany } = broker.context.statements
  await broker.close()
  return { claimOne, claimMany }
}
