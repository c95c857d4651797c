// What purging costs with many retained messages, against dropping a time
// partition of the same rows (docs/scaling.md, issue 17).
//   node purge-cost.mjs [--rows 1000000] [--old-fraction 0.1]
// In a fresh database: ROWS finished messages (state done), OLD-FRACTION of
// them 40 days old (past the 30-day retention), the others a day old; VACUUM
// ANALYZE; then broker.purge() (core's batched DELETE, 5,000 rows a batch)
// is timed. Then the same rows in a table partitioned by day of updated_at,
// where retention is `DROP TABLE` of the old partition, timed too.
// Prints one JSON line. Run it under flock /tmp/iddqueue-bench.lock.
import { parseArgs } from 'node:util'
import { client, connString, createDb, dropDb, now, onDb, round } from './lib/common.mjs'

const { values: a } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    'old-fraction': { type: 'string', default: '0.1' },
  },
})
const rows = Number(a.rows)
const old = Math.round(rows * Number(a['old-fraction']))
const { createBroker } = await import('@iddqueue/core')
const db = `bench_purge_${process.pid}`

/** Inserts `count` done messages `ageDays` old into `table`, in chunks. */
async function fill(sql, table, count, ageDays) {
  for (let i = 0; i < count; i += 250_000) {
    const n = Math.min(250_000, count - i)
    await sql.unsafe(`insert into ${table} (id, queue, actor, state, args, updated_at, enqueued_at)
      select gen_random_uuid(), 'default', 'noop', 'done', jsonb_build_array(jsonb_build_object('i', g)),
             now() - interval '${ageDays} days', now() - interval '${ageDays} days'
        from generate_series(1, ${n}) g`)
  }
}

await createDb(db)
const out = { workload: 'purge-cost', rows, old_rows: old }
try {
  const broker = createBroker({ url: connString(db) })
  await broker.migrate()
  const sql = client(db)
  const t0 = now()
  await fill(sql, 'iddqueue.messages', old, 40)
  await fill(sql, 'iddqueue.messages', rows - old, 1)
  await sql.unsafe('vacuum analyze iddqueue.messages')
  out.fill_s = round((now() - t0) / 1000, 1)
  out.table_mb = round(
    (await sql`select pg_total_relation_size('iddqueue.messages') as b`)[0].b / 1048576,
    0,
  )
  const p0 = now()
  const purged = await broker.purge()
  out.purge_s = round((now() - p0) / 1000, 2)
  out.purged = purged.messages
  out.purge_rows_per_s = round(purged.messages / out.purge_s, 0)
  // A second purge with nothing old left: what every hourly purge costs at this size.
  const e0 = now()
  await broker.purge()
  out.empty_purge_s = round((now() - e0) / 1000, 2)
  await broker.close()

  await sql.unsafe(`create table archive (like iddqueue.messages including defaults)
    partition by range (updated_at)`)
  await sql.unsafe(`create table archive_old partition of archive
    for values from (now() - interval '41 days') to (now() - interval '39 days')`)
  await sql.unsafe(`create table archive_recent partition of archive
    for values from (now() - interval '2 days') to (now() + interval '1 day')`)
  await fill(sql, 'archive', old, 40)
  await fill(sql, 'archive', rows - old, 1)
  const d0 = now()
  await sql.unsafe('drop table archive_old')
  out.drop_partition_s = round((now() - d0) / 1000, 3)
  out.purge_vs_drop = round(out.purge_s / out.drop_partition_s, 0)
  await sql.end()
} catch (error) {
  out.error = String(error?.stack ?? error)
} finally {
  await dropDb(db)
}
process.stdout.write(`${JSON.stringify(out)}\n`)
