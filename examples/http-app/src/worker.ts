/**
 * The worker process: runs the actors declared in jobs.ts until SIGTERM or
 * SIGINT, then stops gracefully (running handlers finish, prefetched messages
 * go back to the queue) and closes the broker.
 */
import { createJobs } from './jobs.js'

const { broker } = createJobs(process.env.DATABASE_URL)
const worker = broker.worker({ concurrency: Number(process.env.WORKER_CONCURRENCY ?? 8) })
await worker.start()
worker.stopOnSignals() // SIGTERM/SIGINT: graceful stop, then broker.close()
console.log(JSON.stringify({ worker: worker.id, queues: worker.queues }))
