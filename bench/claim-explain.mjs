#!/usr/bin/env node
// Claims of one worker shape, one after the other, each under EXPLAIN
// (ANALYZE, BUFFERS) and then marked done (as a settle would), until the
// backlog is drained: the median and p90 execution time per claim, and the
// plan of the 41st claim (halfway through with the defaults).
//
//   node claim-explain.mjs QUEUES BATCH [claim-module.mjs]
//   PRE='set jit = off' node claim-explain.mjs 2 500
//
// QUEUES queues, 50,000 messages sent round-robin through the bulk API, then
// VACUUM (ANALYZE). A claim module (an esbuild bundle of src/sql/claim.ts,
// for example) exporting `claimSql(ns, queueCount)` replaces the built
// statement; PRE runs on the connection first.
import { createBroker } from '@iddqueue/core'
import { client, connString, createDb, dropDb } from './lib/common.mjs'

const Q = Number(process.argv[2] ?? 2)
const B = Number(process.argv[3] ?? 500)
const N = 50_000
const claimMod = process.argv[4] ? await import(process.argv[4]) : null
const db = `bench_claimx_${process.pid}`
await createDb(db)
const broker = createBroker({ url: connString(db) })
const c = client(db)
try {
  await broker.migrate()
  const actors = Array.from({ length: Q }, (_, i) =>
    broker.actor(`noop_${i}`, async () => {}, { queue: `q_${i}` }),
  )
  let next = 0
  for (let i = 0; i < N; i += 1000)
    await broker.enqueueMany(
      Array.from({ length: 1000 }, (_, k) => actors[next++ % Q].message({ i: i + k })),
    )
  if (process.env.PRE) await c.unsafe(process.env.PRE)
  await c.unsafe('vacuum (analyze) iddqueue.messages')
  const sql = claimMod
    ? claimMod.claimSql(broker.context.ns, Q)
    : broker.context.statements[Q === 1 ? 'claimOne' : 'claimMany']
  const queues = actors.map((_, i) => `q_${i}`)
  const times = []
  let claimed = 0
  for (let k = 0; claimed < N; k++) {
    const params = [queues, B, crypto.randomUUID()]
    if (k === 40) {
      const plan = await c.unsafe(`explain (analyze, buffers, costs on) ${sql}`, params)
      console.log(plan.map((r) => r['QUERY PLAN']).join('\n'))
    } else {
      const [row] = await c.unsafe(`explain (analyze, format json) ${sql}`, params)
      const plan = row['QUERY PLAN'][0]
      times.push(plan['Execution Time'])
      if (plan.Plan['Actual Rows'] === 0) break
    }
    const done = await c.unsafe(
      `update iddqueue.messages set state = 'done' where state = 'consumed' returning 1`,
    )
    claimed += done.length
  }
  times.sort((x, y) => x - y)
  console.log(
    `queues ${Q}, batch ${B}, ${times.length + 1} claims: median ${times[times.length >> 1].toFixed(2)} ms, p90 ${times[Math.floor(times.length * 0.9)].toFixed(2)} ms`,
  )
} finally {
  await c.end()
  await broker.close()
  await dropDb(db)
}
