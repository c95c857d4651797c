/**
 * iddqueue observability: a queue-gauge exporter, a worker with the metrics
 * and tracing plugins (spans printed by OpenTelemetry's console exporter),
 * and a few jobs that succeed, retry and fail. Prints both scrapes.
 *
 * Uses DATABASE_URL when set; otherwise starts an embedded PostgreSQL and
 * stops it at the end. Everything lives in its own schema (one per process), dropped at the end.
 *
 *   pnpm --filter @iddqueue-example/observability start
 *   node dist/main.js --check     # also asserts on the outcome (what `pnpm test` runs)
 */
import { parseArgs } from 'node:util'
import { type ActorContext, createBroker } from '@iddqueue/core'
import { queueMetrics, serveMetrics, tracing, workerMetrics } from '@iddqueue/metrics'
import { startTestDatabase } from '@iddqueue/testing'
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import {
  BasicTracerProvider,
  ConsoleSpanExporter,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import postgres from 'postgres'
import { Registry } from 'prom-client'

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } })

// OpenTelemetry: spans to the console; with --check also kept in memory to assert on.
const memory = new InMemorySpanExporter()
const provider = new BasicTracerProvider({
  spanProcessors: [
    new SimpleSpanProcessor(new ConsoleSpanExporter()),
    new SimpleSpanProcessor(memory),
  ],
})
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
trace.setGlobalTracerProvider(provider)

const server = await startTestDatabase({ log: (line) => console.error(line) })
const schema = `iddqueue_observability_${process.pid}`
const admin = postgres(server.url, { max: 1, onnotice: () => {} })

// The app's broker: worker metrics and tracing.
const workerRegistry = new Registry()
const broker = createBroker({
  url: server.url,
  namespace: { schema },
  plugins: [workerMetrics({ registry: workerRegistry }), tracing()],
})
// The exporter: its own pool and registry, as a separate process would have.
const exporterSql = postgres(server.url, { max: 1, onnotice: () => {} })
const exporterRegistry = new Registry()
queueMetrics(exporterSql, { registry: exporterRegistry, namespace: { schema } })

const failures: string[] = []
const check = (ok: boolean, what: string) => {
  if (!ok) failures.push(what)
}

try {
  await admin.unsafe(`drop schema if exists ${schema} cascade`)
  await broker.migrate()
  const exporter = await serveMetrics({ registry: exporterRegistry, port: 0 })
  const workerEndpoint = await serveMetrics({ registry: workerRegistry, port: 0 })

  const resize = broker.actor('resize', (width: number) => width * 2, { queue: 'images' })
  const flaky = broker.actor(
    'flaky',
    (ctx?: ActorContext) => {
      if (ctx!.attempt === 1) throw new Error('upstream timed out')
    },
    { queue: 'images', maxRetries: 2, minBackoffMs: 10, maxBackoffMs: 20 },
  )
  const broken = broker.actor(
    'broken',
    () => {
      throw new TypeError('bad input')
    },
    { queue: 'images', maxRetries: 0 },
  )
  const tracer = provider.getTracer('observability-example')
  // A request that sends work: the send spans are children of it.
  await tracer.startActiveSpan('POST /upload', async (span) => {
    await broker.enqueueMany([resize.message(100), resize.message(200), resize.message(300)])
    await flaky.send()
    await broken.send()
    span.end()
  })
  await broker
    .actor('later', () => {}, { queue: 'reports' })
    .sendWithOptions({
      args: [],
      delayMs: 3_600_000,
    })

  const before = await (await fetch(exporter.url)).text()
  const worker = broker.worker({ queues: ['images'], concurrency: 4, pollIntervalMs: 50 })
  await worker.start()
  await broker.join({ queues: ['images'], timeoutMs: 30_000 })
  await worker.stop()
  const after = await (await fetch(exporter.url)).text()
  const workers = await (await fetch(workerEndpoint.url)).text()

  console.log(
    `# exporter before the worker ran (${exporter.url})\n${pick(before, 'iddqueue_queue_')}`,
  )
  console.log(`# exporter after\n${pick(after, 'iddqueue_queue_')}`)
  console.log(
    `# worker metrics (${workerEndpoint.url})\n${pick(workers, 'iddqueue_worker_messages_')}`,
  )

  check(before.includes('iddqueue_queue_ready{queue="images"} 5'), 'five ready images before')
  check(after.includes('iddqueue_queue_ready{queue="images"} 0'), 'no ready images after')
  check(after.includes('iddqueue_queue_messages{queue="images",state="done"} 4'), 'four done')
  check(
    after.includes('iddqueue_queue_messages{queue="images",state="rejected"} 1'),
    'one rejected',
  )
  check(after.includes('iddqueue_queue_scheduled{queue="reports"} 1'), 'one scheduled report')
  check(
    workers.includes('iddqueue_worker_messages_done_total{queue="images",actor="resize"} 3'),
    'three resizes counted done',
  )
  check(
    workers.includes('iddqueue_worker_messages_retried_total{queue="images",actor="flaky"} 1'),
    'one retry counted',
  )
  check(
    workers.includes('iddqueue_worker_messages_rejected_total{queue="images",actor="broken"} 1'),
    'one rejection counted',
  )
  const spans = memory.getFinishedSpans()
  const request = spans.find((s) => s.name === 'POST /upload')!
  const sends = spans.filter((s) => s.name === 'send images')
  const runs = spans.filter((s) => s.name === 'process images')
  check(sends.length === 3, `three send spans (got ${sends.length})`)
  check(
    sends.every((s) => s.spanContext().traceId === request.spanContext().traceId),
    'sends in the request trace',
  )
  check(runs.length === 6, `six process spans: 3 + 2 attempts + 1 (got ${runs.length})`)
  check(
    runs.every((s) => s.links.some((l) => l.context.traceId === request.spanContext().traceId)),
    'every run linked to the request trace',
  )
  check(
    runs.some((s) => s.attributes['error.type'] === 'TypeError'),
    'the failed run has error.type',
  )
  await exporter.close()
  await workerEndpoint.close()
} finally {
  await broker.close()
  await exporterSql.end()
  await admin.unsafe(`drop schema if exists ${schema} cascade`).catch(() => {})
  await admin.end()
  await server.stop()
  await provider.shutdown()
}

if (values.check) {
  if (failures.length > 0) {
    console.error(
      `observability example: ${failures.length} check(s) failed:\n- ${failures.join('\n- ')}`,
    )
    process.exitCode = 1
  } else console.error('observability example: every check passed')
}

/** The sample lines of a scrape whose metric starts with `prefix`. */
function pick(text: string, prefix: string): string {
  return text
    .split('\n')
    .filter((line) => line.startsWith(prefix))
    .join('\n')
}
