import { coordination } from '@iddqueue/coordination'
import { createBroker } from '@iddqueue/core'
import postgres from 'postgres'
const variant = process.argv[2] ?? 'keyed'
const N = Number(process.argv[3] ?? 5000)
const base = 'postgres://root@127.0.0.1:5432'
const admin = postgres(`${base}/test`, { max: 1, onnotice: () => {} })
const db = `stats_limits_${process.pid}`
await admin.unsafe(`create database ${db}`)
if (process.env.NOJIT) await admin.unsafe(`alter database ${db} set jit = off`)
const url = `${base}/${db}`
const times = {}
const client = postgres(url, { max: 10, onnotice: () => {} })
const broker = createBroker({ url, plugins: variant === 'plain' ? [] : [coordination({ purgeIntervalMs: false })] })
await broker.migrate()
const opts = variant === 'keyed' ? { concurrency: { key: (i) => `k${i % 1000}`, limit: 2 } } : variant === 'global' ? { concurrency: { limit: 16 } } : variant === 'rated' ? { rate: { key: (i) => `k${i % 1000}`, limit: 100, periodMs: 1000 } } : {}
let done = 0; let resolve; const all = new Promise((r) => { resolve = r })
const job = broker.actor('job', () => { if (++done === N) resolve() }, { queue: 'bench', ...opts })
for (let i = 0; i < N; i += 1000) await broker.enqueueMany(Array.from({ length: Math.min(1000, N - i) }, (_, k) => job.message(i + k)))
await client`vacuum analyze`
const claims = []
broker.on('worker:claimed', (e) => claims.push(e))
const worker = broker.worker({ queues: ['bench'], concurrency: 16 })
const t0 = performance.now()
await worker.start()
const waits = {}
let sampling = true
const sampler = (async () => { while (sampling) { const rows = await client`select coalesce(wait_event_type || ':' || wait_event, 'cpu') as w, left(query, 30) as q from pg_stat_activity where datname = ${db} and state = 'active' and pid <> pg_backend_pid()`; for (const r of rows) { const k = r.q.slice(0, 20) + ' ' + r.w; waits[k] = (waits[k] ?? 0) + 1 } ; await new Promise((r) => setTimeout(r, 20)) } })()
await all
sampling = false; await sampler
console.log(waits)
const secs = (performance.now() - t0) / 1000
await worker.stop()
const sum = (xs) => xs.reduce((s, x) => s + x, 0)
console.log(JSON.stringify({ variant, rate: Math.round(N / secs), claims: claims.length, rows: sum(claims.map((c) => c.count)), avgLimit: (sum(claims.map((c) => c.limit)) / claims.length).toFixed(1), avgMs: (sum(claims.map((c) => c.durationMs)) / claims.length).toFixed(2), empty: claims.filter((c) => c.count === 0).length }))
const st = await client`select calls, round(mean_exec_time::numeric,2) as ms, left(query, 60) q from pg_stat_statements where dbid = (select oid from pg_database where datname = ${db}) order by total_exec_time desc limit 8`.catch(() => [])
for (const r of st) console.log(r)
await client.end(); await broker.close()
await admin.unsafe(`drop database ${db} with (force)`); await admin.end()
