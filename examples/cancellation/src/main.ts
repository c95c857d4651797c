/**
 * Cancellation from another process than the worker's.
 *
 * 1. A worker runs in a child process (dist/worker.js).
 * 2. This process sends a newsletter delayed by an hour and cancels it:
 *    `cancelled`, the handler never runs.
 * 3. It sends a long export, waits until the worker has written its first
 *    page, and cancels it: `requested`; the worker aborts the handler's
 *    signal, and the message ends `cancelled`, its progress stopped.
 * 4. SIGTERM stops the worker gracefully.
 *
 * Uses DATABASE_URL when set, otherwise an embedded PostgreSQL, and a fresh
 * database dropped at the end. Exits non-zero if any check fails.
 */
import assert from 'node:assert/strict'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { createBroker } from '@iddqueue/core'
import { createTestDatabase, startTestDatabase, waitFor } from '@iddqueue/testing'
import postgres from 'postgres'
import { declareActors } from './actors.js'

const server = await startTestDatabase({ log: (line) => console.error(line) })
const database = await createTestDatabase(server.url, { prefix: 'example_cancellation' })
const sql = postgres(database.url, { max: 2, onnotice: () => {} })
const broker = createBroker({ url: database.url })
let worker: ReturnType<typeof fork> | undefined

try {
  await broker.migrate()
  await sql`create table export_progress (message_id uuid primary key, page integer not null)`
  const { exportRows, sendNewsletter } = declareActors(broker, sql)

  worker = fork(fileURLToPath(new URL('./worker.js', import.meta.url)), {
    env: { ...process.env, EXAMPLE_DATABASE_URL: database.url },
  })
  const [started] = await once(worker, 'message')
  assert.equal(started, 'started')

  // A delayed message that has not started: cancelled at once, never runs.
  const newsletter = await sendNewsletter.sendWithOptions({ args: ['2031-01'], delayMs: 3_600_000 })
  const delayed = await broker.cancel(newsletter.id)
  assert.deepEqual([delayed.status, delayed.state], ['cancelled', 'cancelled'])
  console.log(`delayed newsletter ${newsletter.id}: ${delayed.status}`)

  // A running message: the worker aborts its signal.
  const job = await exportRows.send('invoices')
  await waitFor(
    async () => (await sql`select 1 from export_progress where message_id = ${job.id}`).length > 0,
    { timeoutMs: 30_000, message: 'the export to write its first page' },
  )
  const running = await broker.cancel(job.id, { timeoutMs: 10_000 })
  assert.equal(running.status, 'requested')
  console.log(`running export ${job.id}: ${running.status}`)

  await waitFor(async () => (await broker.cancellationStatus(job.id)).state === 'cancelled', {
    timeoutMs: 30_000,
    message: 'the export to end cancelled',
  })
  const [progress] = await sql<
    { page: number }[]
  >`select page from export_progress where message_id = ${job.id}`
  assert.ok(progress && progress.page < 10_000, 'the export stopped before its last page')
  console.log(`export stopped at page ${progress.page} of 10000`)

  const exited = once(worker, 'exit')
  worker.kill('SIGTERM')
  const [code] = await exited
  assert.equal(code, 0, 'the worker stopped gracefully')
  worker = undefined
  console.log(JSON.stringify({ ok: true }))
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  worker?.kill('SIGKILL')
  await broker.close()
  await sql.end()
  await database.drop()
  await server.stop()
}
