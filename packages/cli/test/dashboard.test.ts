import { createBroker } from '@iddqueue/core'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import { describe, expect, it } from 'vitest'
import { runCli } from './helpers.js'
import { serveCli } from './serve-cli.js'

const database = useTestDatabase()

describe('iddqueue dashboard', () => {
  it('serves the dashboard on 127.0.0.1, read-only, until SIGTERM', async () => {
    const producer = createBroker({ url: database.url })
    await producer.migrate()
    await producer.actor('shown', () => {}, { queue: 'shown_queue' }).send()
    await producer.close()

    const served = await serveCli(
      ['dashboard', '--port', '0', '--base-path', '/ops', '--url', database.url],
      'the dashboard to listen',
    )
    try {
      const url = /serving the dashboard at (\S+) /.exec(served.stderr())![1]!
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ops\/$/)
      expect(served.stderr()).toContain('(read-only)')
      const page = await fetch(url)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('shown_queue')
      const post = await fetch(`${url}queues/shown_queue/pause`, { method: 'POST' })
      expect(post.status).toBe(403)
      expect(await served.stop()).toBe(0)
    } finally {
      served.kill()
    }
    expect(served.stderr()).toContain('SIGTERM: stopped')
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
