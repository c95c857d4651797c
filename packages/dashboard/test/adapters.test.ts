import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { createDashboard, fastifyDashboard, honoHandler, toNodeHandler } from '../src/index.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

/** A browser's round trip over real HTTP: read the page's token and cookie, post a form. */
async function pauseThroughHttp(origin: string, base: string, queue: string) {
  const page = await fetch(`${origin}${base}/`)
  expect(page.status).toBe(200)
  expect(page.headers.get('content-security-policy')).toContain("default-src 'none'")
  const cookie = page.headers.getSetCookie()[0]!.split(';')[0]!
  const token = /name="csrf-token" content="([^"]+)"/.exec(await page.text())![1]!
  const post = await fetch(`${origin}${base}/queues/${queue}/pause`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: token }),
  })
  expect(post.status).toBe(303)
  expect(post.headers.get('location')).toMatch(new RegExp(`^${base}/queues/${queue}\\?notice=`))
  const forged = await fetch(`${origin}${base}/queues/${queue}/resume`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie,
      origin: 'http://evil.test',
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ _csrf: token }),
  })
  expect(forged.status).toBe(403)
  const events = await fetch(`${origin}${base}/events`)
  expect(events.headers.get('content-type')).toContain('text/event-stream')
  const reader = events.body!.getReader()
  expect(new TextDecoder().decode((await reader.read()).value)).toContain('connected')
  await reader.cancel()
}

describe('adapters', () => {
  it('toNodeHandler serves it on node:http', async () => {
    const broker = db.broker()
    const dashboard = createDashboard({ broker, basePath: '/ops', readOnly: false })
    const server = createServer(toNodeHandler(dashboard))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const queue = uniqueQueue()
    try {
      await pauseThroughHttp(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        '/ops',
        queue,
      )
      expect(await broker.isPaused(queue)).toBe(true)
    } finally {
      await dashboard.close()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('fastifyDashboard mounts it on Fastify', async () => {
    const broker = db.broker()
    const dashboard = createDashboard({ broker, basePath: '/admin/queues', readOnly: false })
    // Live streams are long-lived connections: close them on shutdown, as the docs say.
    const app = Fastify({ forceCloseConnections: true })
    await app.register(fastifyDashboard(dashboard))
    app.get('/other', async () => 'still mine')
    const origin = await app.listen({ port: 0, host: '127.0.0.1' })
    const queue = uniqueQueue()
    try {
      await pauseThroughHttp(origin, '/admin/queues', queue)
      expect(await broker.isPaused(queue)).toBe(true)
      expect(await (await fetch(`${origin}/other`)).text()).toBe('still mine')
    } finally {
      await dashboard.close()
      await app.close()
    }
  })

  it('honoHandler mounts it on Hono', async () => {
    const broker = db.broker()
    const dashboard = createDashboard({ broker, basePath: '/q', readOnly: false })
    const app = new Hono()
    app.all('/q', honoHandler(dashboard))
    app.all('/q/*', honoHandler(dashboard))
    const queue = uniqueQueue()
    const page = await app.request('http://hono.test/q/')
    expect(page.status).toBe(200)
    const cookie = page.headers.getSetCookie()[0]!.split(';')[0]!
    const token = /name="csrf-token" content="([^"]+)"/.exec(await page.text())![1]!
    const post = await app.request(`http://hono.test/q/queues/${queue}/pause`, {
      method: 'POST',
      headers: {
        cookie,
        origin: 'http://hono.test',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ _csrf: token }),
    })
    expect(post.status).toBe(303)
    expect(await broker.isPaused(queue)).toBe(true)
    await dashboard.close()
  })
})
