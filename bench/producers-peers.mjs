#!/usr/bin/env node
// The peers in issue 20's concurrent-producers shape: 1, 16 and 64 loops in
// one process, each awaiting one single send at a time, 8,000 sends in all,
// no worker running; beside PostgreSQL's own one-row inserts over 16
// connections. iddqueue: `actor.send()` on one broker (pool: the producers,
// at most 32, as the `producers-*` workloads). graphile-worker:
// `addJob(identifier, payload)` on one `makeWorkerUtils` (`maxPoolSize` the
// same). pg-boss: `send(queue, data)` on one `PgBoss` (`max` the same). Each
// measurement in a fresh database; the systems in reverse order on even runs.
//
//   flock -x /tmp/iddqueue-load.lock node producers-peers.mjs [--producers 1,16,64] [--runs 1]
//
// Prints JSON lines on stdout and a table on stderr (sends/s, and the ratio
// to the plain inserts of the same run).
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import * as adapter from './lib/adapter.mjs'
import { connString, createDb, dropDb, median, now, round, settle } from './lib/common.mjs'
import { preparePeers } from './lib/externals.mjs'

const { values: a } = parseArgs({
  options: {
    producers: { type: 'string', default: '1,16,64' },
    runs: { type: 'string', default: '1' },
  },
})
const SENDS = 8_000
const MAX_POOL = 32
const log = (msg) => process.stderr.write(`[producers] ${msg}\n`)

const peers = await preparePeers(['graphile-worker', 'pg-boss'])
for (const note of peers.notes) log(note)
const peerModule = (name) => {
  const require = createRequire(join(peers.dir, 'package.json'))
  return import(pathToFileURL(require.resolve(name)).href)
}

/** Each system as `open(url, pool)` -> `{ send(i), close() }`. */
const SYSTEMS = {
  iddqueue: async (url, pool) => {
    const p = await adapter.singleSender(url, pool)
    return { send: (i) => p.addOne({ i }), close: () => p.close() }
  },
  'graphile-worker': async (url, pool) => {
    const { makeWorkerUtils } = await peerModule('graphile-worker')
    const pg = await peerModule('pg')
    // Its own pool, ended here: the database is dropped right after.
    const pgPool = new (pg.default ?? pg).Pool({ connectionString: url, max: pool })
    pgPool.on('error', () => {})
    const utils = await makeWorkerUtils({ pgPool })
    await utils.migrate()
    return {
      send: (i) => utils.addJob('noop', { i }),
      close: async () => {
        await utils.release()
        await pgPool.end()
      },
    }
  },
  'pg-boss': async (url, pool) => {
    const mod = await peerModule('pg-boss')
    const PgBoss = mod.default ?? mod
    const boss = new PgBoss({ connectionString: url, max: pool })
    boss.on('error', (e) => log(`pg-boss error ${e?.message ?? e}`))
    await boss.start()
    await boss.createQueue('noop')
    return { send: (i) => boss.send('noop', { i }), close: () => boss.stop({ graceful: false, wait: true }) }
  },
}

/** `producers` loops awaiting single sends, SENDS in all; sends per second. */
async function produce(system, producers) {
  const db = `bench_prod_${process.pid}_${system.replace(/\W/g, '')}_${producers}`
  await createDb(db)
  try {
    const p = await SYSTEMS[system](connString(db), Math.max(2, Math.min(producers, MAX_POOL)))
    await p.send(-1) // connect, prepare, create what a first send creates (untimed)
    await settle(db)
    let next = 0
    const t0 = now()
    await Promise.all(
      Array.from({ length: producers }, async () => {
        while (next < SENDS) await p.send(next++)
      }),
    )
    const seconds = (now() - t0) / 1000
    await p.close()
    return SENDS / seconds
  } finally {
    await dropDb(db).catch(() => {})
  }
}

/** PostgreSQL alone: 16 connections each awaiting a one-row insert into a queue-like table. */
async function plainInserts() {
  const db = `bench_prod_${process.pid}_plain`
  await createDb(db)
  const sql = postgres(connString(db), { max: 16, onnotice: () => {} })
  try {
    await sql`create table jobs (id uuid primary key default gen_random_uuid(), queue text not null,
      args jsonb not null, created_at timestamptz not null default now())`
    await settle(db)
    let next = 0
    const t0 = now()
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < SENDS)
          await sql.unsafe('insert into jobs (queue, args) values ($1, $2::jsonb)', [
            'noop',
            JSON.stringify({ i: next++ }),
          ])
      }),
    )
    return SENDS / ((now() - t0) / 1000)
  } finally {
    await sql.end({ timeout: 5 })
    await dropDb(db).catch(() => {})
  }
}

const counts = a.producers.split(',').map(Number)
const systems = ['iddqueue', ...peers.systems]
const results = []
for (let run = 1; run <= Number(a.runs); run++) {
  const plain = await plainInserts()
  results.push({ system: 'postgresql', producers: 16, run, sends_per_s: round(plain, 0) })
  log(`run ${run} plain inserts over 16 connections: ${round(plain, 0)}/s`)
  for (const producers of counts)
    for (const system of run % 2 ? systems : [...systems].reverse()) {
      const rate = await produce(system, producers)
      const line = { system, producers, run, sends_per_s: round(rate, 0), plain: round(plain, 0) }
      process.stdout.write(`${JSON.stringify(line)}\n`)
      results.push(line)
      log(`run ${run} ${system} ${producers} producer(s): ${round(rate, 0)} sends/s`)
    }
}
const plainMedian = median(
  results.filter((r) => r.system === 'postgresql').map((r) => r.sends_per_s),
)
const rows = systems.flatMap((system) =>
  counts.map((producers) => {
    const rate = median(
      results
        .filter((r) => r.system === system && r.producers === producers)
        .map((r) => r.sends_per_s),
    )
    return `| ${system} | ${producers} | ${round(rate, 0)} | ${round(rate / plainMedian, 2)} |`
  }),
)
process.stderr.write(
  `\n| system | producers | sends/s | vs plain inserts (${round(plainMedian, 0)}/s) |\n|---|---|---|---|\n${rows.join('\n')}\n`,
)
process.exit(0)
