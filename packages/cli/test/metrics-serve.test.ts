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

/** Waits for `check` (every 50 ms, 15 s at most), or fails naming `what`. */
function until(check: () => boolean, what: string): Promise<void> {
  return waitFor(check, { timeoutMs: 15_000, intervalMs: 50, message: what })
}

describe('iddqueue metrics serve', () => {
  it('serves the queue gauges until SIGTERM', async () => {
    const producer = createBroker({ url: database.url })
    await producer.migrate()
    const job = producer.actor('exported', () => {}, { queue: 'exported' })
    await producer.enqueueMany([job.message(), job.message()])
    await producer.close()

    const child = spawn(
      process.execPath,
      [BIN, 'metrics', 'serve', '--port', '0', '--url', database.url],
      { env: withoutDatabaseUrl(), stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    try {
      await until(() => stderr.includes('SIGTERM or SIGINT stops it'), 'the exporter to listen')
      const url = /serving metrics at (\S+);/.exec(stderr)![1]!
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
      const text = await (await fetch(url)).text()
      expect(text).toContain('iddqueue_queue_ready{queue="exported"} 2')
      expect(text).toContain('iddqueue_queue_messages{queue="exported",state="queued"} 2')
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
    }
    expect(stderr).toContain('SIGTERM: stopped')
  })

  it('exits 2 for a bad port or queue before connecting', async () => {
    for (const [args, message] of [
      [['--port', 'http'], 'invalid --port "http"'],
      [['--port', '70000'], 'invalid --port 70000'],
      [['--queue', 'bad name'], 'Invalid queue name'],
    ] as const) {
      const { code, stderr } = await runCli(['metrics', 'serve', ...args, '--url', database.url])
      expect([args, code]).toEqual([args, 2])
      expect(stderr).toContain(message)
    }
  })
})
