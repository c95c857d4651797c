// Per-view response time of the dashboard over a database with many retained
// rows. Creates its own database on the server of $DATABASE_URL (dropped at the
// end), fills it (90% done, 3% rejected, 2% cancelled, 5% queued, over 20
// queues), VACUUM ANALYZE, then times each view through the handler (built
// package) beside a baseline measured in the same run: one `select 1` round
// trip on the same pool. Rows finish `msPerRow` apart, newest first: 1 (the
// default) puts all of them in the last 17 minutes (a 1,000 messages/s flow,
// so 'done in the last hour' is 900k rows); 2592 spreads 1M rows over the
// default 30-day retention. The first request of each view is also printed:
// the overview's is the first of the dashboard, which counts the whole hour's
// chart once (decision 0017). With liveRate > 0, done rows keep finishing at
// that many per second while the views are timed (inserted every 100 ms), as
// in a live flow; by default the rows stop when the fill ends. Usage:
//   flock -x /tmp/iddqueue-load.lock node bench/view-timing.mjs [rows=1000000] [runs=20] [msPerRow=1] [liveRate=0]
import { attemptHistory, createBroker } from '@iddqueue/core'
import { coreMigrations, migrate } from '@iddqueue/schema'
import postgres from 'postgres'
import { createDashboard } from '../dist/index.js'

const rows = Number(process.argv[2] ?? 1_000_000)
const runs = Number(process.argv[3] ?? 20)
const msPerRow = Number(process.argv[4] ?? 1)
const liveRate = Number(process.argv[5] ?? 0)
const admin = postgres(process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test', {
  max: 1,
  onnotice: () => {},
})
const name = `iddqueue_dash_bench_${process.pid}`
await admin.unsafe(`create database ${name}`)
const url = new URL(process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test')
url.pathname = `/${name}`
const sql = postgres(url.href, { max: 1, onnotice: () => {} })
let broker
let dashboard
let live
try {
  await migrate(sql, { owners: [coreMigrations] })
  const started = Date.now()
  await sql.unsafe(`insert into iddqueue.messages (id, queue, actor, state, args, eta, enqueued_at, updated_at, failure)
    select uuidv7_like, 'queue_' || (i % 20), 'actor_' || (i % 5),
      case when i % 100 < 90 then 'done' when i % 100 < 93 then 'rejected' when i % 100 < 95 then 'cancelled' else 'queued' end,
      jsonb_build_array(i, repeat('x', 150)), now() - (i::bigint * ${msPerRow} || ' ms')::interval, now() - (i::bigint * ${msPerRow} || ' ms')::interval, now() - (i::bigint * ${msPerRow} || ' ms')::interval,
      case when i % 100 between 90 and 92 then '{"type":"Error","message":"boom","at":"2030-01-01T00:00:00Z","attempt":1}'::jsonb end
    from (select i, (lpad(to_hex(((extract(epoch from now()) * 1000)::bigint - i::bigint * ${msPerRow})), 12, '0') || '7' || substr(md5(i::text), 1, 19))::uuid as uuidv7_like
          from generate_series(1, ${rows}) as i) s`)
  await sql.unsafe('vacuum (analyze) iddqueue.messages')
  const [{ size }] =
    await sql`select pg_size_pretty(pg_total_relation_size('iddqueue.messages')) as size`
  console.error(
    `filled ${rows} rows (${size}), ${msPerRow} ms apart, in ${Date.now() - started} ms${liveRate > 0 ? `; ${liveRate} done/s while timed` : ''}`,
  )
  broker = createBroker({ url: url.href, plugins: [attemptHistory()], poolSize: 2 })
  // pollIntervalMs at its minimum and a pause between runs: the overview then
  // pays for queueStats() on most requests, as the first tab after a quiet spell does.
  dashboard = createDashboard({ broker, pollIntervalMs: 250 })
  const [{ id }] = await sql`select id from iddqueue.messages where state = 'rejected' limit 1`
  const views = {
    baseline: null,
    overview: '/',
    queue: '/queues/queue_3',
    messages: '/messages',
    'messages queue+state': '/messages?queue=queue_3&state=queued',
    'messages rejected': '/messages?queue=queue_3&state=rejected',
    message: `/messages/${id}`,
    failed: '/failed?queue=queue_3',
    workers: '/workers',
  }
  if (liveRate > 0) {
    let n = 0
    let inserting = Promise.resolve()
    live = {
      timer: setInterval(() => {
        const count = Math.round(liveRate / 10)
        inserting = inserting.then(
          () => sql`insert into iddqueue.messages (id, queue, actor, state, args, eta, enqueued_at, updated_at)
            select gen_random_uuid(), 'queue_' || ((${n} + i) % 20), 'actor_' || (i % 5), 'done',
                   '[0]'::jsonb, now(), now(), now()
              from generate_series(1, ${count}) as i`,
        )
        n += count
      }, 100),
      done: () => inserting,
    }
  }
  const time = async (fn) => {
    const t = performance.now()
    await fn()
    return performance.now() - t
  }
  const results = {}
  for (const [view, path] of Object.entries(views)) {
    const samples = []
    for (let i = 0; i < runs; i++) {
      samples.push(
        await time(async () => {
          if (path === null) await broker.context.executor.query('select 1')
          else {
            const response = await dashboard(new Request(`http://bench${path}`))
            if (response.status !== 200) throw new Error(`${path}: ${response.status}`)
            await response.text()
          }
        }),
      )
      await new Promise((resolve) => setTimeout(resolve, 260))
    }
    const first = samples[0]
    samples.sort((a, b) => a - b)
    results[view] = {
      first,
      p50: samples[Math.floor(runs * 0.5)],
      p95: samples[Math.min(runs - 1, Math.ceil(runs * 0.95) - 1)],
    }
  }
  const base = results.baseline.p50
  console.log(`| view | first | p50 | p95 | p95 / baseline p50 |`)
  console.log(`| --- | --- | --- | --- | --- |`)
  for (const [view, r] of Object.entries(results)) {
    console.log(
      `| ${view} | ${r.first.toFixed(1)} ms | ${r.p50.toFixed(1)} ms | ${r.p95.toFixed(1)} ms | ${(r.p95 / base).toFixed(0)}× |`,
    )
  }
} finally {
  if (live) {
    clearInterval(live.timer)
    await live.done()
  }
  await dashboard?.close()
  await broker?.close()
  await sql.end()
  await admin.unsafe(`drop database if exists ${name} with (force)`)
  await admin.end()
}
