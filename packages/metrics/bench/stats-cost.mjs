// Cost of queueStats() (one scrape) with retained rows across 20 queues:
// every queue and one queue, before and after a candidate (queue, state)
// index, with the plan PostgreSQL chose.
//
//   flock /tmp/iddqueue-bench.lock node packages/metrics/bench/stats-cost.mjs 100000 1000000
import { createBroker } from '@iddqueue/core'
import postgres from 'postgres'
import { queueStats } from '../dist/index.js'
import { median, withDatabase } from './common.mjs'

const sizes = process.argv.slice(2).map(Number)
if (sizes.length === 0) sizes.push(100_000)
const QUEUES = 20
const REPEAT = 7

async function time(fn) {
  const samples = []
  for (let i = 0; i < REPEAT; i++) {
    const started = performance.now()
    await fn()
    samples.push(performance.now() - started)
  }
  return Number(median(samples).toFixed(2))
}

/** EXPLAIN ANALYZE of the very statement queueStats() runs, captured through an executor. */
async function plan(sql, broker, queue) {
  let captured
  const capture = {
    query: async (text, params) => {
      captured = { text, params }
      return []
    },
    transaction: (fn) => fn(capture),
    inTransaction: false,
  }
  await queueStats(
    capture,
    queue ? { queue, namespace: broker.namespace } : { namespace: broker.namespace },
  )
  const rows = await sql.unsafe(
    `explain (analyze, buffers, format json) ${captured.text}`,
    captured.params,
  )
  const top = rows[0]['QUERY PLAN'][0]
  const nodes = []
  const walk = (node) => {
    nodes.push(node['Node Type'] + (node['Index Name'] ? ` ${node['Index Name']}` : ''))
    for (const child of node.Plans ?? []) walk(child)
  }
  walk(top.Plan)
  return { nodes: nodes.join(' > '), ms: Number(top['Execution Time'].toFixed(2)) }
}

for (const size of sizes) {
  await withDatabase(`stats${size}`, async (url) => {
    const broker = createBroker({ url })
    await broker.migrate()
    const sql = postgres(url, { max: 1, onnotice: () => {} })
    // Retained history dominates: 90% done, 3% rejected, 2% cancelled, 4% queued (a quarter delayed), 1% consumed.
    await sql.unsafe(`insert into iddqueue.messages (id, queue, actor, state, eta, args, updated_at)
      select gen_random_uuid(), 'queue_' || (i % ${QUEUES}), 'job',
             case when r < 0.90 then 'done' when r < 0.93 then 'rejected' when r < 0.95 then 'cancelled'
                  when r < 0.99 then 'queued' else 'consumed' end,
             now() + case when r >= 0.98 and r < 0.99 then interval '1 hour' else interval '0' end,
             jsonb_build_array(jsonb_build_object('i', i, 'pad', repeat('x', 200))),
             now() - (random() * interval '2 days')
        from (select i, random() as r from generate_series(1, ${size}) as i) s`)
    await sql.unsafe('vacuum (analyze) iddqueue.messages')
    const [{ bytes }] =
      await sql`select pg_total_relation_size('iddqueue.messages')::bigint as bytes`
    const result = { rows: size, queues: QUEUES, table_mb: Math.round(Number(bytes) / 1e6) }
    result.all_ms = await time(() => queueStats(broker))
    result.one_ms = await time(() => queueStats(broker, { queue: 'queue_7' }))
    result.all_plan = await plan(sql, broker)
    result.one_plan = await plan(sql, broker, 'queue_7')
    await sql.unsafe('create index candidate_queue_state on iddqueue.messages (queue, state)')
    await sql.unsafe('vacuum (analyze) iddqueue.messages')
    result.indexed_all_ms = await time(() => queueStats(broker))
    result.indexed_one_ms = await time(() => queueStats(broker, { queue: 'queue_7' }))
    result.indexed_one_plan = await plan(sql, broker, 'queue_7')
    const [{ ibytes }] =
      await sql`select pg_relation_size('iddqueue.candidate_queue_state')::bigint as ibytes`
    result.index_mb = Math.round(Number(ibytes) / 1e6)
    console.log(JSON.stringify(result))
    await sql.end()
    await broker.close()
  })
}
