import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createBroker } from '@iddqueue/core'
import { waitFor } from '@iddqueue/testing'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './helpers.js'

const database = useTestDatabase()
const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url))
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url))
const SCHEMA = 'cli_worker'

let sql: postgres.Sql

beforeAll(async () => {
  sql = postgres(database.url, { max: 1, onnotice: () => {} })
  // The in-process runs below import the fixture too; it reads its database from here.
  process.env.WORKER_APP_URL = database.url
})

afterAll(async () => {
  delete process.env.WORKER_APP_URL
  await sql.end()
})

/** The environment of this process without DATABASE_URL: the child gets the test file's database only. */
function withoutDatabaseUrl(): NodeJS.ProcessEnv {
  const { DATABASE_URL: _, ...env } = process.env
  return env
}

/** Waits for `check` (every 50 ms, 15 s at most), or fails naming `what`. */
function until(check: () => Promise<boolean>, what: string): Promise<void> {
  return waitFor(check, { timeoutMs: 15_000, intervalMs: 50, message: what })
}

async function states(): Promise<Record<string, string>> {
  const rows = await sql`select queue, string_agg(distinct state, ',') as states
    from ${sql(SCHEMA)}.messages group by queue order by queue`
  return Object.fromEntries(rows.map((row) => [row.queue, row.states]))
}

describe('iddqueue worker', () => {
  it('runs the module’s actors on the given queues and stops gracefully on SIGTERM', async () => {
    const producer = createBroker({ url: database.url, namespace: { schema: SCHEMA } })
    await producer.migrate()
    const record = producer.actor('record', async (n: number) => n, { queue: 'default' })
    const elsewhere = producer.actor('elsewhere', async (n: number) => n, { queue: 'other' })
    await producer.enqueueMany(Array.from({ length: 20 }, (_, i) => record.message(i)))
    await elsewhere.send(1)
    await producer.close()

    const child = spawn(
      process.execPath,
      [BIN, 'worker', './worker-app.mjs', '--queues', 'default', '--concurrency', '4'],
      {
        cwd: FIXTURES,
        env: { ...withoutDatabaseUrl(), WORKER_APP_URL: database.url, APP_SCHEMA: SCHEMA },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    try {
      await until(async () => stderr.includes('SIGTERM or SIGINT stops it'), 'the worker to start')
      await until(async () => (await states()).default === 'done', 'the default queue to be done')
      expect(await states()).toEqual({ default: 'done', other: 'queued' })
      const [registered] = await sql`select count(*)::int as n from ${sql(SCHEMA)}.workers`
      expect(registered!.n).toBe(1)
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
    }
    expect(stderr).toMatch(
      /^worker [0-9a-f-]{36} running queues default; SIGTERM or SIGINT stops it\n/,
    )
    expect(stderr).toContain('SIGTERM: stopping')
    expect(stderr).toMatch(/worker [0-9a-f-]{36} stopped\n$/)
    const [left] = await sql`select count(*)::int as n from ${sql(SCHEMA)}.workers`
    expect(left!.n).toBe(0)
  })

  it('refuses a --schema or --prefix that differs from the module’s broker', async () => {
    const cases: [string[], string][] = [
      [
        ['--schema', 'elsewhere'],
        'iddqueue worker: --schema "elsewhere" differs from the schema of the broker ./namespaced-app.mjs exports ("app_jobs")',
      ],
      [
        ['--prefix', 'app_'],
        'iddqueue worker: --prefix "app_" differs from the prefix of the broker ./namespaced-app.mjs exports ("")',
      ],
    ]
    for (const [globals, message] of cases) {
      const { code, stderr } = await runCli(
        [...globals, 'worker', './namespaced-app.mjs'],
        {},
        FIXTURES,
      )
      expect([globals, code]).toEqual([globals, 2])
      expect(stderr).toContain(message)
    }
  })

  it('exits 2 before starting for a module it cannot use or bad options', async () => {
    const cases: [string[], string][] = [
      [['./missing.mjs'], 'iddqueue worker: MODULE: no file '],
      [['./no-broker.mjs'], 'iddqueue worker: MODULE: ./no-broker.mjs exports no broker'],
      [['./worker-app.mjs', '--concurrency', 'many'], 'invalid --concurrency "many"'],
      [['./worker-app.mjs', '--concurrency', '0'], 'Invalid concurrency 0 (worker option)'],
      [['./worker-app.mjs', '--queues', 'default,'], 'iddqueue worker: Invalid queue name ""'],
      [[], 'missing MODULE'],
      [
        ['worker-app.mjs'],
        `MODULE: cannot find package worker-app.mjs from ${FIXTURES.replace(/\/$/, '')}; for the file ${FIXTURES}worker-app.mjs, write ./worker-app.mjs`,
      ],
    ]
    for (const [args, message] of cases) {
      const { code, stderr } = await runCli(['worker', ...args], {}, FIXTURES)
      expect([args, code]).toEqual([args, 2])
      expect(stderr).toContain(message)
    }
  })
})
