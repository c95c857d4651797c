import { createBroker } from '@iddqueue/core'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import { describe, expect, it } from 'vitest'
import { runCli } from './helpers.js'
import { serveCli } from './serve-cli.js'

const database = useTestDatabase()

describe('iddqueue metrics serve', () => {
  it('serves the queue gauges until SIGTERM', async () => {
    const producer = createBroker({ url: database.url })
    await producer.migrate()
    const job = producer.actor('exported', () => {}, { queue: 'exported' })
    await producer.enqueueMany([job.message(), job.message()])
    await producer.close()

    const served = await serveCli(
      ['metrics', 'serve', '--port', '0', '--url', database.url],
      'the exporter to listen',
    )
    try {
      const url = /serving metrics at (\S+);/.exec(served.stderr())![1]!
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
      const text = await (await fetch(url)).text()
      expect(text).toContain('iddqueue_queue_ready{queue="exported"} 2')
      expect(text).toContain('iddqueue_queue_messages{queue="exported",state="queued"} 2')
      expect(await served.stop()).toBe(0)
    } finally {
      served.kill()
    }
    expect(served.stderr()).toContain('SIGTERM: stopped')
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
