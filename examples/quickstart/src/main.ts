/**
 * iddqueue quickstart: migrate, declare actors, enqueue 10,000 messages with
 * a progress bar, process them with a worker, print throughput and a summary.
 *
 * Uses DATABASE_URL when set; otherwise starts an embedded PostgreSQL and
 * stops it at the end. Everything lives in its own schema, dropped at the end.
 *
 *   pnpm quickstart                 # 10,000 messages
 *   pnpm quickstart --messages 50000
 */
import { parseArgs } from 'node:util'
import { type ActorContext, createBroker, Retry } from '@iddqueue/core'
import { startTestDatabase } from '@iddqueue/testing'
import postgres from 'postgres'
import { progressBar } from './progress.js'

const { values } = parseArgs({ options: { messages: { type: 'string', default: '10000' } } })
const total = Number(values.messages)
if (!Number.isInteger(total) || total < 1)
  throw new Error(`--messages must be a positive integer, got ${values.messages}`)

const server = await startTestDatabase({ log: (line) => console.error(line) })
const schema = 'iddqueue_quickstart'
const admin = postgres(server.url, { max: 1, onnotice: () => {} })
const broker = createBroker({ url: server.url, namespace: { schema } })

// Drops the schema and stops what was started; the same promise however often
// it is called (at the end, and after Ctrl-C).
let cleaning: Promise<void> | undefined
const cleanup = () =>
  (cleaning ??= (async () => {
    await broker.close().catch(() => {})
    await admin.unsafe(`drop schema if exists ${schema} cascade`).catch(() => {})
    await admin.end({ timeout: 1 }).catch(() => {})
    await server.stop().catch(() => {})
  })())

// Ctrl-C (or SIGTERM): one line, clean up, exit 130. The work in flight then
// fails (in embedded mode its PostgreSQL is going away too): that is expected
// and not reported. A second Ctrl-C ends the process at once.
let interrupted = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true
    process.stderr.write(`\n${signal}: interrupted; dropping the schema and exiting\n`)
    setTimeout(() => process.exit(130), 10_000).unref()
    void cleanup().finally(() => process.exit(130))
  })
}

try {
  await admin.unsafe(`drop schema if exists ${schema} cascade`)
  const { applied } = await broker.migrate()
  console.error(`migrated ${schema}: ${applied.map((m) => `${m.owner} #${m.version}`).join(', ')}`)

  // An actor: typed arguments, a context with the attempt number and an AbortSignal.
  const checksum = broker.actor(
    'checksum',
    async (order: { id: number; items: number[] }, ctx: ActorContext) => {
      // One message in 500 fails on its first attempt and is retried 50 ms later.
      if (order.id % 500 === 0 && ctx.attempt === 1) throw new Retry({ delayMs: 50 })
      return order.items.reduce((sum, item) => (sum * 31 + item) % 1_000_003, 7)
    },
    { queue: 'orders', maxRetries: 3 },
  )

  const sending = progressBar('enqueue', total)
  for (let sent = 0; sent < total; sent += 1000) {
    const batch = Array.from({ length: Math.min(1000, total - sent) }, (_, k) =>
      checksum.message({ id: sent + k, items: [sent, k, 42] }),
    )
    await broker.enqueueMany(batch)
    sending.update(sent + batch.length)
  }
  const enqueueSeconds = sending.finish(total)

  let completed = 0
  broker.on('message:completed', () => {
    completed++
  })
  const working = progressBar('process', total)
  const worker = broker.worker({ queues: ['orders'], concurrency: 16 })
  await worker.start()
  const ticker = setInterval(() => working.update(completed), 100)
  await broker.join({ queues: ['orders'], timeoutMs: 300_000 })
  clearInterval(ticker)
  const processSeconds = working.finish(completed)
  await worker.stop()

  const states = await admin.unsafe(
    `select state, count(*)::int as n, sum(retries)::int as retries from ${schema}.messages group by state order by state`,
  )
  const summary = {
    messages: total,
    enqueue: { seconds: round(enqueueSeconds), perSecond: Math.round(total / enqueueSeconds) },
    process: { seconds: round(processSeconds), perSecond: Math.round(total / processSeconds) },
    states: Object.fromEntries(states.map((row) => [row.state, row.n])),
    retried: states.reduce((sum, row) => sum + (row.retries ?? 0), 0),
    database: server.mode,
  }
  console.log(JSON.stringify(summary, null, 2))
  if (summary.states.done !== total) {
    console.error(`expected ${total} done messages, found ${JSON.stringify(summary.states)}`)
    process.exitCode = 1
  }
} catch (error) {
  if (!interrupted) throw error
} finally {
  if (!interrupted) await cleanup()
}

function round(seconds: number): number {
  return Math.round(seconds * 100) / 100
}
