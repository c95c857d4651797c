import { coordination } from '@iddqueue/coordination'
import { createBroker } from '@iddqueue/core'
import postgres from 'postgres'
const variant = process.argv[2] ?? 'keyed'
const base = 'postgres://root@127.0.0.1:5432'
const admin = postgres(`${base}/test`, { max: 1, onnotice: () => {} })
const db = `explain_limits_${process.pid}`
await admin.unsafe(`create database ${db}`)
const url = `${base}/${db}`
let text
const client = postgres(url, { max: 10, onnotice: () => {}, debug: (_c, q) => { if (!text && q.includes('claim_lims') && q.startsWith('with recursive')) text = q } })
const broker = createBroker({ sql: client, plugins: [coordination({ purgeIntervalMs: false })] })
await broker.migrate()
const opts = variant === 'keyed' ? { concurrency: { key: (i) => `k${i % 1000}`, limit: 2 } } : variant === 'global' ? { concurrency: { limit: 16 } } : { rate: { key: (i) => `k${i % 1000}`, limit: 100, periodMs: 1000 } }
const job = broker.actor('job', async () => { await new Promise((r) => setTimeout(r, 2)) }, { queue: 'bench', ...opts })
for (let i = 0; i < 10000; i += 1000) await broker.enqueueMany(Array.from({ length: 1000 }, (_, k) => job.message(i + k)))
const sql = postgres(url, { max: 1, onnotice: () => {} })
await sql`vacuum analyze`
const worker = broker.worker({ queues: ['bench'], concurrency: 16 })
await worker.start()
await new Promise((r) => setTimeout(r, 500))
await worker.stop()
console.log(text.slice(0, 200))
const plan = await sql.begin(async (tx) => {
  const r = await tx.unsafe(`explain (analyze, buffers, timing) ${text}`, [['bench'], 536, '00000000-0000-0000-0000-000000000001'])
  throw Object.assign(new Error('rollback'), { r })
}).catch((e) => { if (!e.r) console.log(e); return e.r })
console.log(plan.map((x) => x['QUERY PLAN']).join('\n'))
await sql.end(); await broker.close(); await client.end()
await admin.unsafe(`drop database ${db} with (force)`); await admin.end()
