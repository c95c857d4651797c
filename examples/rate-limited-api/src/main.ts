/**
 * Calls to an external API with a per-customer limit, across every worker:
 * at most 2 requests in flight per customer, enforced by the claim (the
 * actor's `concurrency` option: a customer at its limit is stepped over and
 * no worker slot waits for it), and a 429 answer puts the message back
 * until the provider's Retry-After without burning an attempt, holding the
 * customer for every worker (RateLimited with the same key).
 *
 * Uses DATABASE_URL when set; otherwise starts an embedded PostgreSQL. Everything
 * lives in its own schema, dropped at the end. With --check, exits 1 unless the
 * limits held and every call succeeded on its first counted attempt.
 *
 *   pnpm --filter @iddqueue-example/rate-limited-api start
 */
import { parseArgs } from 'node:util'
import { coordination, RateLimited } from '@iddqueue/coordination'
import { createBroker } from '@iddqueue/core'
import { startTestDatabase } from '@iddqueue/testing'
import postgres from 'postgres'
import { startFakeApi } from './fake-api.js'

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } })
const CUSTOMERS = 4
const CALLS_PER_CUSTOMER = 15
const PER_CUSTOMER = 2

const server = await startTestDatabase({ log: (line) => console.error(line) })
const schema = 'iddqueue_rate_limited_api'
const admin = postgres(server.url, { max: 1, onnotice: () => {} })
const api = await startFakeApi()
const coord = coordination()
const broker = createBroker({ url: server.url, namespace: { schema }, plugins: [coord] })
let failed = false

try {
  await admin.unsafe(`drop schema if exists ${schema} cascade`)
  await broker.migrate()

  const callApi = broker.actor(
    'call_api',
    async (customerId: string, call: number) => {
      const response = await fetch(`${api.url}/charge?customer=${customerId}&call=${call}`)
      if (response.status === 429) {
        const seconds = Number(response.headers.get('retry-after') ?? 1)
        throw new RateLimited({
          untilMs: Math.ceil(seconds * 1_000),
          key: `customer:${customerId}`,
        })
      }
      if (!response.ok) throw new Error(`API answered ${response.status}`)
      return response.json()
    },
    {
      queue: 'api',
      maxRetries: 0,
      concurrency: { key: (customerId: string) => `customer:${customerId}`, limit: PER_CUSTOMER },
    },
  )

  const messages = []
  for (let c = 0; c < CUSTOMERS; c++)
    for (let i = 0; i < CALLS_PER_CUSTOMER; i++) messages.push(callApi.message(`c${c}`, i))
  await broker.enqueueMany(messages)

  const worker = broker.worker({ queues: ['api'], concurrency: 16 })
  await worker.start()
  await broker.join({ queues: ['api'], timeoutMs: 60_000 })
  await worker.stop()

  const rows = await admin.unsafe(
    `select state, retries from ${schema}.messages where queue = 'api'`,
  )
  const done = rows.filter((r) => r.state === 'done' && r.retries === 0).length
  const held = (await coord.listLimits()).filter((l) => l.scope === 'key').length
  console.log(
    `${done} of ${rows.length} calls done with no retry counted; API saw at most ${api.stats.maxInFlight} in flight per customer (limit ${PER_CUSTOMER}), answered ${api.stats.tooMany} x 429 and ${api.stats.ok} x 200; ${held} customers were held by a 429`,
  )
  if (values.check) {
    const expected = CUSTOMERS * CALLS_PER_CUSTOMER
    failed =
      done !== expected ||
      api.stats.maxInFlight > PER_CUSTOMER ||
      api.stats.tooMany !== CUSTOMERS ||
      api.stats.ok !== expected ||
      held !== CUSTOMERS
    if (failed) console.error('check failed')
  }
} finally {
  await broker.close()
  await admin.unsafe(`drop schema if exists ${schema} cascade`)
  await admin.end()
  api.server.close()
  await server.stop()
}
process.exitCode = failed ? 1 : 0
