// One worker process of the scaling workloads (lib/scale.mjs): the same
// `noop` actor on queue `default` as lib/adapter.mjs, a worker with the
// concurrency it is given, "ready" on stdout once started, a graceful stop
// on SIGTERM. Usage: node scale-worker.mjs URL CONCURRENCY
import { pathToFileURL } from 'node:url'

const SNAPSHOT = process.env.IDDQUEUE_BENCH_CORE
const { createBroker } = await import(SNAPSHOT ? pathToFileURL(SNAPSHOT).href : '@iddqueue/core')
const [url, concurrency] = process.argv.slice(2)
const broker = createBroker({ url })
broker.actor('noop', async () => {})
const worker = broker.worker({ concurrency: Number(concurrency) })
process.once('SIGTERM', async () => {
  await worker.stop()
  await broker.close()
})
await worker.start()
process.stdout.write('ready\n')
