// What purging costs with many retained messages, against dropping a time
// partition of the same rows (docs/scaling.md, issue 17).
//   node purge-cost.mjs [--rows 1000000] [--old-fraction 0.1] [--hold-seconds 240]
//                       [--rows-per-hold 4000000] [--drain] [--lock FILE | --no-lock]
// In a fresh database: ROWS finished messages (state done), OLD-FRACTION of
// them 40 days old (past the 30-day retention) and inserted first, the others
// a day old; VACUUM ANALYZE; then broker.purge() (core's batched DELETE, 5,000
// rows a batch) is timed, with the WAL it wrote and the purge statement's
// plan, and then a second purge that finds nothing old (what every hourly
// purge costs at that size). Then the same old rows in one partition of a
// table partitioned by day of updated_at, where retention is `DROP TABLE` of
// that partition, timed too. With --drain, between the two: a 50,000-message
// drain alone and one started together with a purge of the same old tranche
// (see drainEffect).
// Prints progress on stderr and one JSON line on stdout. It takes the
// machine's exclusive load lock (/tmp/iddqueue-load.lock) itself, once per
// phase: the fill releases it after every HOLD-SECONDS (or ROWS-PER-HOLD
// rows, whichever comes first, checking between chunks of 250,000 rows), then
// VACUUM, the two purges, the drop each take one hold; do not wrap it in
// flock. The database is dropped at the end, on an error, and on SIGINT /
// SIGTERM / SIGHUP (synchronously, with psql, on the way out), so only a
// SIGKILL leaves it behind (`bench_purge_<pid>`).
import { spawnSync } from 'node:child_process'
import { parseArgs } from 'node:util'
import {
  client,
  connString,
  createDb,
  deferred,
  dropDb,
  now,
  PG,
  round,
  sleep,
  untilDeadline,
} from './lib/common.mjs'
import { holdLoadLock, LOAD_LOCK } from './lib/load-lock.mjs'

const { values: a } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    'old-fraction': { type: 'string', default: '0.1' },
    'rows-per-hold': { type: 'string', default: '4000000' },
    'hold-seconds': { type: 'string', default: '240' },
    lock: { type: 'string', default: LOAD_LOCK },
    'no-lock': { type: 'boolean', default: false },
    drain: { type: 'boolean', default: false },
  },
})
const rows = Number(a.rows)
const old = Math.round(rows * Number(a['old-fraction']))
const PER_HOLD = Number(a['rows-per-hold'])
const HOLD_MS = Number(a['hold-seconds']) * 1000
const CHUNK = 250_000
const { createBroker } = await import('@iddqueue/core')
const db = `bench_purge_${process.pid}`
const lock = a['no-lock'] ? null : a.lock
const t00 = now()
const log = (msg) =>
  process.stderr.write(
    `[purge-cost ${new Date().toISOString().slice(11, 19)} +${Math.round((now() - t00) / 1000)}s] ${msg}\n`,
  )
const fmt = (n) => Math.round(n).toLocaleString('en-US')

// lib/load-lock.mjs turns SIGINT/SIGTERM/SIGHUP into process.exit(130), and an
// 'exit' listener cannot wait for a promise: drop the database with psql,
// synchronously (WITH (FORCE) ends this process's own backends, which may
// still be running a statement).
let dropped = false
process.on('exit', () => {
  if (dropped) return
  process.stderr.write(`[purge-cost] interrupted: dropping ${db}\n`)
  spawnSync(
    'psql',
    [
      ...['-h', PG.host, '-p', String(PG.port), '-U', PG.user, '-d', PG.adminDb],
      ...['-qc', `drop database if exists "${db}" with (force)`],
    ],
    { stdio: 'ignore', timeout: 60_000 },
  )
})

/** Runs fn under one hold of the exclusive load lock; returns its seconds (lock wait excluded). */
async function locked(what, fn) {
  const w0 = now()
  const release = await holdLoadLock(lock)
  try {
    log(`${what} (lock after ${round((now() - w0) / 1000, 1)} s)`)
    const t0 = now()
    await fn()
    const s = (now() - t0) / 1000
    log(`${what}: ${round(s, 1)} s`)
    return s
  } finally {
    await release()
  }
}

/**
 * Inserts `count` done messages `ageDays` old into `table` in chunks of
 * 250,000, releasing the lock after HOLD_MS or PER_HOLD rows; returns the
 * seconds spent inserting (lock waits excluded).
 */
async function fill(sql, table, count, ageDays) {
  let seconds = 0
  let done = 0
  while (done < count)
    seconds += await locked(
      `fill ${table} from ${fmt(done)} of ${fmt(count)} (${ageDays} days old)`,
      async () => {
        const h0 = now()
        const until = done + PER_HOLD
        while (done < count && done < until && now() - h0 < HOLD_MS) {
          const n = Math.min(CHUNK, count - done)
          const c0 = now()
          await sql.unsafe(`insert into ${table} (id, queue, actor, state, args, updated_at, enqueued_at)
      select gen_random_uuid(), 'default', 'noop', 'done', jsonb_build_array(jsonb_build_object('i', g)),
             now() - interval '${ageDays} days', now() - interval '${ageDays} days'
        from generate_series(1, ${n}) g`)
          done += n
          log(
            `  ${table}: ${fmt(done)} / ${fmt(count)} rows (${fmt(n / ((now() - c0) / 1000))} rows/s)`,
          )
        }
        // Write the pages out inside the hold, not during someone else's measurement.
        await sql.unsafe('checkpoint')
      },
    )
  return seconds
}

const walLsn = async (sql) => (await sql`select pg_current_wal_lsn()::text as l`)[0].l
const walMb = async (sql, from) =>
  round(
    (await sql`select pg_wal_lsn_diff(pg_current_wal_lsn(), ${from}::pg_lsn)::float8 as b`)[0].b /
      1048576,
    0,
  )

const DRAIN_JOBS = 50_000

/**
 * W3's drain of DRAIN_JOBS messages on `queue` (one worker, concurrency 16,
 * defaults but no purge of its own), clock from createBroker until nothing
 * of the queue is undone; returns jobs/s.
 */
async function drainQueue(sql, queue) {
  let started = 0
  const all = deferred()
  const t0 = now()
  const broker = createBroker({ url: connString(db) })
  broker.actor(
    queue,
    async () => {
      if (++started === DRAIN_JOBS) all.resolve()
    },
    { queue },
  )
  const worker = broker.worker({ concurrency: 16, purgeIntervalMs: false })
  await worker.start()
  if ((await untilDeadline(all.promise, t0 + 120_000)) === 'timeout') {
    await broker.close()
    throw new Error(`${queue}: ${started} of ${DRAIN_JOBS} started in 120 s`)
  }
  const left = async () =>
    (
      await sql`select count(*)::int as n from iddqueue.messages where queue = ${queue} and state <> 'done'`
    )[0].n
  while ((await left()) > 0) await sleep(5)
  const seconds = (now() - t0) / 1000
  await worker.stop()
  await broker.close()
  return round(DRAIN_JOBS / seconds, 0)
}

/**
 * --drain: what a purge does to a worker draining at the same time. After
 * the timed purges: VACUUM (the deleted rows' space is reused, so the new
 * old rows land where the first ones were), the old tranche again, two
 * queues of DRAIN_JOBS ready messages, then in one hold a drain alone and a
 * drain started together with broker.purge().
 */
async function drainEffect(sql, out) {
  await locked('vacuum after the purge', async () => {
    await sql.unsafe('vacuum analyze iddqueue.messages')
    await sql.unsafe('checkpoint')
  })
  await fill(sql, 'iddqueue.messages', old, 40)
  const broker = createBroker({ url: connString(db) })
  await locked(`two queues of ${fmt(DRAIN_JOBS)} ready messages`, async () => {
    for (const queue of ['drain_alone', 'drain_during_purge']) {
      const actor = broker.actor(queue, async () => {}, { queue })
      for (let i = 0; i < DRAIN_JOBS; i += 1000)
        await broker.enqueueMany(
          Array.from({ length: 1000 }, (_, k) => actor.message({ i: i + k })),
        )
    }
    await sql.unsafe('vacuum analyze iddqueue.messages')
    await sql.unsafe('checkpoint')
  })
  await locked('drain alone, then drain during a purge', async () => {
    out.drain_alone_jobs_per_s = await drainQueue(sql, 'drain_alone')
    const p0 = now()
    let purgeEnd = null
    const purging = broker.purge().then((r) => {
      purgeEnd = now()
      return r
    })
    out.drain_during_purge_jobs_per_s = await drainQueue(sql, 'drain_during_purge')
    const drainEnd = now()
    const r = await purging
    out.purge_during_drain_s = round((purgeEnd - p0) / 1000, 2)
    out.purge_during_drain_rows = r.messages
    // How much of the drain the purge overlapped (1 = all of it).
    out.drain_overlap = round(Math.min(1, (purgeEnd - p0) / (drainEnd - p0)), 2)
  })
  await broker.close()
  out.drain_ratio = round(out.drain_during_purge_jobs_per_s / out.drain_alone_jobs_per_s, 2)
  log(
    `drain alone ${fmt(out.drain_alone_jobs_per_s)} jobs/s, during the purge ${fmt(out.drain_during_purge_jobs_per_s)} (${out.drain_ratio}x); purge ${out.purge_during_drain_s} s`,
  )
}

await createDb(db)
const out = { workload: 'purge-cost', rows, old_rows: old, started_at: new Date().toISOString() }
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
  const size = async () =>
    round((await sql`select pg_total_relation_size('iddqueue.messages') as b`)[0].b / 1048576, 0)
  out.table_mb = await size()
  // The purge statement's plan at this size (EXPLAIN without ANALYZE: nothing runs).
  const retentionMs = 30 * 24 * 3600 * 1000
  out.purge_plan = (
    await sql.unsafe(`explain ${broker.context.statements.purgeMessages}`, [retentionMs, 5000])
  ).map((r) => r['QUERY PLAN'])
  log(`purge plan:\n  ${out.purge_plan.join('\n  ')}`)
  // One hold, two timed purges: the first deletes the old rows, the second
  // finds nothing old left (what every hourly purge costs at this size).
  let purged
  await locked('purge, then purge with nothing old', async () => {
    const wal0 = await walLsn(sql)
    const p0 = now()
    let shown = p0
    purged = await broker.purge({
      onProgress: ({ messages }) => {
        if (now() - shown < 5000) return
        shown = now()
        log(
          `  purged ${fmt(messages)} of ${fmt(old)} (${fmt(messages / ((now() - p0) / 1000))} rows/s)`,
        )
      },
    })
    out.purge_s = round((now() - p0) / 1000, 2)
    out.purge_wal_mb = await walMb(sql, wal0)
    const wal1 = await walLsn(sql)
    const e0 = now()
    await broker.purge()
    out.empty_purge_s = round((now() - e0) / 1000, 2)
    out.empty_purge_wal_mb = await walMb(sql, wal1)
  })
  out.purged = purged.messages
  out.purge_rows_per_s = round(purged.messages / out.purge_s, 0)
  // Deleted rows stay as dead tuples until a VACUUM: the table does not shrink.
  out.table_mb_after_purge = await size()
  await broker.close()
  log(
    `purge ${out.purge_s} s (${fmt(out.purge_rows_per_s)} rows/s, ${out.purge_wal_mb} MB WAL), empty purge ${out.empty_purge_s} s`,
  )

  if (a.drain) await drainEffect(sql, out)

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
  await locked('drop partition', async () => {
    const wal = await walLsn(sql)
    const d0 = now()
    await sql.unsafe('drop table archive_old')
    out.drop_partition_s = round((now() - d0) / 1000, 3)
    out.drop_wal_mb = await walMb(sql, wal)
  })
  out.purge_vs_drop = round(out.purge_s / out.drop_partition_s, 0)
  await sql.end()
} catch (error) {
  out.error = String(error?.stack ?? error)
} finally {
  await dropDb(db)
  dropped = true
}
out.total_min = round((now() - t00) / 60000, 1)
process.stdout.write(`${JSON.stringify(out)}\n`)
