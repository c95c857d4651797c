/**
 * The worker process: declares the actors and runs them until SIGTERM.
 * Started by main.ts with the database URL in EXAMPLE_DATABASE_URL.
 */
import { createBroker } from '@iddqueue/core'
import postgres from 'postgres'
import { declareActors } from './actors.js'

const url = process.env.EXAMPLE_DATABASE_URL
if (!url) throw new Error('EXAMPLE_DATABASE_URL is not set (main.ts starts this process)')

const sql = postgres(url, { max: 2 })
const broker = createBroker({ url })
declareActors(broker, sql)

const worker = broker.worker({ concurrency: 4 })
await worker.start()
process.send?.('started')
process.once('SIGTERM', async () => {
  await worker.stop() // graceful: waits for running handlers
  await broker.close()
  await sql.end()
})
