// A/B cost of the workerMetrics plugin on a drain: 50,000 prefilled
// messages, one worker of concurrency 16 (the drain benchmark's W3 shape),
// alternating runs without (A) and with (B) the plugin in one invocation.
// Prints the medians of throughput and of the worker process's CPU time per
// message (less sensitive than wall time to the other users of the machine).
//
//   flock /tmp/iddqueue-bench.lock node packages/metrics/bench/worker-metrics-ab.mjs [rounds=3] [messages=50000]
import { createBroker } from '@iddqueue/core'
import { Registry } from 'prom-client'
import { workerMetrics } from '../dist/index.js'
import { median, withDatabase } from './common.mjs'

const rounds = Number(process.argv[2] ?? 3)
const total = Number(process.argv[3] ?? 50_000)

async function drain(url, withMetrics) {
  const registry = new Registry()
  const plugins = withMetrics ? [workerMetrics({ registry })] : []
  const producer = createBroker({ url })
  const noop = producer.actor('noop', () => {}, { queue: 'drain' })
  for (let i = 0; i < total; i += 1000) {
    await producer.enqueueMany(
      Array.from({ length: Math.min(1000, total - i) }, (_, j) => noop.message({ i: i + j })),
    )
  }
  await producer.close()
  const broker = createBroker({ url, plugins })
  broker.actor('noop', () => {}, { queue: 'drain' })
  const started = performance.now()
  const cpu = process.cpuUsage()
  const worker = broker.worker({ queues: ['drain'], concurrency: 16 })
  await worker.start()
  await broker.join({ queues: ['drain'], timeoutMs: 300_000 })
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  await worker.stop()
  if (withMetrics) {
    const [done] = (await registry.getSingleMetric('iddqueue_worker_messages_done_total').get())
      .values
    if (done.value !== total) throw new Error(`metrics counted ${done.value} of ${total}`)
  }
  await broker.close()
  return { rate: total / (ms / 1000), cpuUs: (used.user + used.system) / total }
}

await withDatabase('ab', async (url) => {
  const setup = createBroker({ url })
  await setup.migrate()
  await setup.close()
  const a = []
  const b = []
  const cpuA = []
  const cpuB = []
  for (let round = 0; round < rounds; round++) {
    // Alternate the order so a drift of the machine hits both alike.
    const order = round % 2 === 0 ? [false, true] : [true, false]
    for (const withMetrics of order) {
      const { rate, cpuUs } = await drain(url, withMetrics)
      ;(withMetrics ? b : a).push(rate)
      ;(withMetrics ? cpuB : cpuA).push(cpuUs)
      console.error(
        `round ${round + 1} ${withMetrics ? 'with' : 'without'} metrics: ${Math.round(rate)} msg/s, ${cpuUs.toFixed(2)} µs CPU a message`,
      )
      const sql = (await import('postgres')).default(url, { max: 1, onnotice: () => {} })
      await sql`delete from iddqueue.messages`
      await sql`vacuum analyze iddqueue.messages`.catch(() => {})
      await sql.end()
    }
  }
  const ratio = median(b) / median(a)
  console.log(
    JSON.stringify({
      messages: total,
      rounds,
      without_median: Math.round(median(a)),
      with_median: Math.round(median(b)),
      ratio: Number(ratio.toFixed(3)),
      cost_percent: Number(((1 - ratio) * 100).toFixed(1)),
      cpu_us_without: Number(median(cpuA).toFixed(2)),
      cpu_us_with: Number(median(cpuB).toFixed(2)),
      cpu_cost_percent: Number(((median(cpuB) / median(cpuA) - 1) * 100).toFixed(1)),
    }),
  )
})
