/**
 * The HTTP API (Hono on node:http).
 *
 *   POST /word-count {"text": "..."}          202 {"id"}: enqueued, runs in the worker process
 *   POST /word-count?waitMs=5000 {"text"}     200 {"id","result"} once the worker stored it,
 *                                             202 {"id","status":"running"} if it takes longer
 *   GET  /healthz                             200 ok (readiness: the broker is set up)
 *   GET  /admin/queues/                       the iddqueue dashboard (read-only; put your
 *                                             authentication in front of it in production)
 *
 * SIGTERM/SIGINT: stop accepting connections, let in-flight requests finish,
 * then close the broker (its pool and LISTEN connection).
 */
import { serve } from '@hono/node-server'
import { createDashboard, honoHandler } from '@iddqueue/dashboard'
import { ResultFailure, ResultTimeout } from '@iddqueue/results'
import { Hono } from 'hono'
import { createJobs } from './jobs.js'

const { broker, wordCount } = createJobs(process.env.DATABASE_URL)
await broker.ready()

const app = new Hono()

app.post('/word-count', async (c) => {
  const body = await c.req.json<{ text?: unknown }>().catch(() => ({}) as { text?: unknown })
  if (typeof body.text !== 'string') return c.json({ error: 'body must be {"text": string}' }, 400)
  const waitMs = Math.min(Math.max(Number(c.req.query('waitMs') ?? 0) || 0, 0), 30_000)

  const message = await wordCount.send(body.text)
  if (waitMs === 0) return c.json({ id: message.id }, 202)
  try {
    // Waits on the broker's shared LISTEN connection; no pool connection is held.
    const result = await message.result({ timeoutMs: waitMs })
    return c.json({ id: message.id, result }, 200)
  } catch (error) {
    if (ResultTimeout.isInstance(error)) return c.json({ id: message.id, status: 'running' }, 202)
    if (ResultFailure.isInstance(error))
      return c.json({ id: message.id, failure: error.failure }, 500)
    throw error
  }
})

app.get('/healthz', (c) => c.text('ok'))

// The dashboard, read-only (the default): mounted at a runtime base path.
const dashboard = createDashboard({ broker, basePath: '/admin/queues' })
app.all('/admin/queues', honoHandler(dashboard))
app.all('/admin/queues/*', honoHandler(dashboard))

const server = serve(
  {
    fetch: app.fetch,
    port: Number(process.env.PORT ?? 3000),
    hostname: process.env.HOST ?? '127.0.0.1',
  },
  (info) => console.log(JSON.stringify({ listening: info.port })),
)

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    console.log(JSON.stringify({ stopping: signal }))
    // The dashboard first: it ends its live streams, so server.close() is not held open by them.
    void dashboard.close().then(() => server.close(() => void broker.close()))
  })
}
