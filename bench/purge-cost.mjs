// What purging costs with many retained messages, against dropping a time
// partition of the same rows (docs/scaling.md, issue 17).
//   node purge-cost.mjs [--rows 1000000] [--old-fraction 0.1] [--lock FILE | --no-lock]
// In a fresh database: ROWS finished messages (state done), OLD-FRACTION of
// them 40 days old (past the 30-day retention), the others a day old; VACUUM
// ANALYZE; then broker.purge() (core's batched DELETE, 5,000 rows a batch)
// is timed. Then the same rows in a table partitioned by day of updated_at,
// where retention is `DROP TABLE` of the old partition (holding the same old
// rows), timed too.
// Prints one JSON line. It takes the machine's exclusive load lock
// (/tmp/iddqueue-load.lock) itself, once per phase (each fill of 4 million
// rows, VACUUM, the two purges, the drop), so no hold lasts more than a minute or
// two even at 10 million rows; do not wrap it in flock.
import { parseArgs } from 'node:util'
import { client, connString, createDb, dropDb, now, round } from './lib/common.mjs'
import { holdLoadLock, LOAD_LOCK } from './lib/load-lock.mjs'

const { values: a } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    'old-fraction': { type: 'string', default: '0.1' },
    'rows-per-hold': { type: 'string', default: '4000000' },
    lock: { type: 'string', default: LOAD_LOCK },
    'no-lock': { type: 'boolean', default: false },
  },
})
const rows = Number(a.rows)
const old = Math.round(rows * Number(a['old-fraction']))
const PER_HOLD = Number(a['rows-per-hold'])
const { createBroker } = await import('@iddqueue/core')
const db = `bench_purge_${process.pid}`
const lock = a['no-lock'] ? null : a.lock
const log = (msg) => process.stderr.write(`[purge-cost] ${msg}\n`)

/** Runs fn under one hold of the exclusive load lock; returns its seconds (lock wait excluded). */
async function locked(what, fn) {
  const release = await holdLoadLock(lock)
  try {
    log(what)
    const t0 = now()
    await fn()
    return (now() - t0) / 1000
  } finally {
    await release()
  }
}

/** Inserts `count` done messages `ageDays` old into `table`, in chunks, PER_HOLD rows per lock hold. */
async function fill(sql, table, count, ageDays) {
  let seconds = 0
  for (let h = 0; h < count; h += PER_HOLD)
    seconds += await locked(`fill ${table} ${h}/${count} (${ageDays} days old)`, async () => {
      for (let i = h; i < Math.min(count, h + PER_HOLD); i += 250_000) {
        const n = Math.min(250_000, count - i)
        await sql.unsafe(`insert into ${table} (id, queue, actor, state, args, updated_at, enqueued_at)
      select gen_random_uuid(), 'default', 'noop', 'done', jsonb_build_array(jsonb_build_object('i', g)),
             now() - interval '${ageDays} days', now() - interval '${ageDays} days'
        from generate_series(1, ${n}) g`)
      }
      // Write the pages out inside the hold, not during someone else's measurement.
      await sql.unsafe('checkpoint')
    })
  return seconds
}

await createDb(db)
const out = { workload: 'purge-cost', rows, old_rows: old }
try {
  const broker = createBroker({ url: connString(db) })
  await broker.migrate()
  const sql = client(db)
  // Autovacuum would otherwise work on the new rows between the lock holds,
  // during other people's measurements; the VACUUM below does its work.
  await sql.unsafe('alter table iddqueue.messages set (autovacuum_enabled = off)')
  out.fill_s =
    (await fill(sql, 'iddqueue.messages', old, 40)) +
    (await fill(sql, 'iddqueue.messages', rows - old, 1)) +
    (await locked('vacuum analyze', async () => {
      await sql.unsafe('vacuum analyze iddqueue.messages')
      await sql.unsafe('checkpoint')
    }))
  out.fill_s = round(out.fill_s, 1)
  out.table_mb = round(
    (await sql`select pg_total_relation_size('iddqueue.messages') as b`)[0].b / 1048576,
    0,
  )
  // One hold, two timed purges: the first deletes the old rows, the second
  // finds nothing old left (what every hourly purge costs at this size).
  let purged
  await locked('purge, then purge with nothing old', async () => {
    const p0 = now()
    purged = await broker.purge()
    out.purge_s = round((now() - p0) / 1000, 2)
    const e0 = now()
    await broker.purge()
    out.empty_purge_s = round((now() - e0) / 1000, 2)
  })
  out.purged = purged.messages
  out.purge_rows_per_s = round(purged.messages / out.purge_s, 0)
  await broker.close()

  await sql.unsafe(`create table archive (like iddqueue.messages including defaults)
    partition by range (updated_at)`)
  await sql.unsafe(`create table archive_old partition of archive
    for values from (now() - interval '41 days') to (now() - interval '39 days')`)
  await sql.unsafe(`create table archive_recent partition of archive
    for values from (now() - interval '2 days') to (now() + interval '1 day')`)
  for (const p of ['archive_old', 'archive_recent'])
    await sql.unsafe(`alter table ${p} set (autovacuum_enabled = off)`)
  // Only the partition to drop is filled: dropping it touches no other
  // partition, so the rows of the others would change nothing but the fill time.
  await fill(sql, 'archive', old, 40)
  out.archive_rows = old
  out.drop_partition_s = round(
    await locked('drop partition', () => sql.unsafe('drop table archive_old')),
    3,
  )
  out.purge_vs_drop = round(out.purge_s / out.drop_partition_s, 0)
  await sql.end()
} catch (error) {
  out.error = String(error?.stack ?? error)
} finally {
  await dropDb(db)
}
process.stdout.write(`${JSON.stringify(out)}\n`)
