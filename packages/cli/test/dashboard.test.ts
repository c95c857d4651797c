import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createBroker } from '@iddqueue/core'
import { waitFor } from '@iddqueue/testing'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import { describe, expect, it } from 'vitest'
import { runCli } from './helpers.js'

const database = useTestDatabase()
const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url))

/** The environment of this process without DATABASE_URL: the child gets the test file's database only. */
function withoutDatabaseUrl(): NodeJS.ProcessEnv {
  const { DATABASE_URL: _, ...env } = process.env
  return env
}

/** Waits for `check` (every 50 ms, 30 s at most), or fails naming `what`. */
function until(check: () => boolean, what: string): Promise<void> {
  return waitFor(check, { timeoutMs: 30_000, intervalMs: 50, message: what })
}

describe('iddqueue dashboard', () => {
  it('serves the dashboard on 127.0.0.1, read-only, until SIGTERM', async () => {
    const producer = createBroker({ url: database.url })
    await producer.migrate()
    await producer.actor('shown', () => {}, { queue: 'shown_queue' }).send()
    await producer.close()

    const child = spawn(
      process.execPath,
      [BIN, 'dashboard', '--port', '0', '--base-path', '/ops', '--url', database.url],
      { env: withoutDatabaseUrl(), stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    try {
      await until(() => stderr.includes('SIGTERM or SIGINT stops it'), 'the dashboard to listen')
      const url = /serving the dashboard at (\S+) /.exec(stderr)![1]!
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ops\/$/)
      expect(stderr).toContain('(read-only)')
      const page = await fetch(url)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('shown_queue')
      const post = await fetch(`${url}queues/shown_queue/pause`, { method: 'POST' })
      expect(post.status).toBe(403)
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
    }
    expect(stderr).toContain('SIGTERM: stopped')
  })

  it('exits 2 for a bad port or base path', async () => {
    for (const [args, message] of [
      [['--port', 'http'], 'invalid --port "http"'],
      [['--base-path', 'no-slash'], 'basePath'],
    ] as const) {
      const run = await runCli(['dashboard', ...args, '--url', database.url])
      expect(run.code, run.stderr).toBe(2)
      expect(run.stderr).toContain(message)
    }
  })
})
