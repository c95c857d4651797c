/**
 * What CI runs: migrates a fresh database, starts the server and the worker
 * as real processes, calls the API, and checks the answers and the database.
 * Then SIGTERM stops both, and both must exit 0.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { createTestDatabase, startTestDatabase } from '@iddqueue/testing'
import { createJobs } from './jobs.js'

const server = await startTestDatabase({ log: (line) => console.error(line) })
const database = await createTestDatabase(server.url, { prefix: 'example_http' })
const children: ChildProcess[] = []

/** Starts `dist/<name>.js` and resolves with its first JSON line on stdout. */
async function start(name: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  const child = spawn(process.execPath, [fileURLToPath(new URL(`./${name}.js`, import.meta.url))], {
    env: { ...process.env, DATABASE_URL: database.url, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  children.push(child)
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  const [first] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`${name} exited with ${code} before it was ready`)
    }),
  ])) as [string]
  return JSON.parse(first) as Record<string, unknown>
}

try {
  const { broker } = createJobs(database.url)
  await broker.migrate() // in production: `iddqueue migrate --plugins @iddqueue/results` in the deploy step
  await broker.close()

  const listening = await start('server', { PORT: '0' })
  const base = `http://127.0.0.1:${String(listening.listening)}`
  await start('worker', { WORKER_CONCURRENCY: '4' })

  const waited = await fetch(`${base}/word-count?waitMs=20000`, {
    method: 'POST',
    body: JSON.stringify({ text: 'the quick brown fox jumps over the lazy dog' }),
  })
  assert.equal(waited.status, 200)
  const body = (await waited.json()) as { id: string; result: { words: number; longest: string } }
  assert.deepEqual(body.result, { words: 9, longest: 'quick' })
  console.log('POST /word-count?waitMs=20000 ->', JSON.stringify(body.result))

  const accepted = await fetch(`${base}/word-count`, {
    method: 'POST',
    body: JSON.stringify({ text: 'a b' }),
  })
  assert.equal(accepted.status, 202)
  const bad = await fetch(`${base}/word-count`, { method: 'POST', body: '{"text": 42}' })
  assert.equal(bad.status, 400)

  const dashboard = await fetch(`${base}/admin/queues/`)
  assert.equal(dashboard.status, 200)
  assert.match(dashboard.headers.get('content-security-policy') ?? '', /script-src 'self'/)
  assert.match(await dashboard.text(), /word_count|word-count|Overview/)
  console.log('GET /admin/queues/ -> 200 (the dashboard)')

  for (const child of children) child.kill('SIGTERM')
  const codes = await Promise.all(children.map(async (child) => (await once(child, 'exit'))[0]))
  assert.deepEqual(codes, [0, 0], 'server and worker stop gracefully on SIGTERM')
  children.length = 0
  console.log(JSON.stringify({ ok: true }))
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  for (const child of children) child.kill('SIGKILL')
  await database.drop()
  await server.stop()
}
