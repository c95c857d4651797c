import {
  coreMigrations,
  type Executor,
  InvalidIdentifierError,
  InvalidOptionError,
  migrate,
  postgresJsExecutor,
} from '@iddqueue/schema'
import { startTestDatabase } from '@iddqueue/testing'
import postgres from 'postgres'
import { Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'
import { type MetricsServer, queueMetrics, serveMetrics } from '../src/index.js'
import { insertRows, setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()
const servers: MetricsServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

/** Parses Prometheus text exposition into `name{labels}` → value, and the `# TYPE` lines. */
function parse(text: string) {
  const samples = new Map<string, number>()
  const types = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ')
      types.set(name!, type!)
    } else if (line !== '' && !line.startsWith('#')) {
      const at = line.lastIndexOf(' ')
      samples.set(line.slice(0, at), Number(line.slice(at + 1)))
    }
  }
  return { samples, types }
}

describe('queueMetrics', () => {
  it('exports every gauge, metric by metric, from one query per scrape', async () => {
    const queue = uniqueQueue('prom')
    await insertRows(db.sql, queue, [
      { state: 'queued', eta: '-1 minute', updated: '-90 seconds', count: 2 },
      { state: 'queued', eta: '1 hour' },
      { state: 'consumed', eta: '-1 second' },
      { state: 'done', count: 3 },
      { state: 'rejected' },
      { state: 'cancelled' },
    ])
    const registry = new Registry()
    const executor = postgresJsExecutor(db.sql)
    let statements = 0
    const counting: Executor = {
      query: (text, params) => {
        statements++
        return executor.query(text, params)
      },
      transaction: (fn) => executor.transaction(fn),
      inTransaction: false,
    }
    queueMetrics(counting, { registry, queue })
    const server = await serveMetrics({ registry, port: 0 })
    servers.push(server)

    const response = await fetch(server.url)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/plain')
    const { samples, types } = parse(await response.text())
    // One grouped statement for the four gauges, and one more for the next scrape.
    expect(statements).toBe(1)
    await registry.metrics()
    expect(statements).toBe(2)

    expect(types.get('iddqueue_queue_messages')).toBe('gauge')
    for (const [state, n] of Object.entries({
      queued: 3,
      consumed: 1,
      done: 3,
      rejected: 1,
      cancelled: 1,
    })) {
      expect(samples.get(`iddqueue_queue_messages{queue="${queue}",state="${state}"}`)).toBe(n)
    }
    expect(samples.get(`iddqueue_queue_ready{queue="${queue}"}`)).toBe(2)
    expect(samples.get(`iddqueue_queue_scheduled{queue="${queue}"}`)).toBe(1)
    const age = samples.get(`iddqueue_queue_oldest_ready_seconds{queue="${queue}"}`)!
    expect(age).toBeGreaterThanOrEqual(60)
    expect(age).toBeLessThan(300)
    // No label other than queue and state.
    for (const key of samples.keys())
      expect(key).toMatch(/^iddqueue_queue_\w+\{queue="[^"]+"(,state="\w+")?\}$/)
  })

  it('drops a queue that no longer holds messages, and keeps a selected empty one at zero', async () => {
    const queue = uniqueQueue('gone')
    const selected = uniqueQueue('selected')
    await insertRows(db.sql, queue, [{ state: 'queued' }])
    const all = new Registry()
    queueMetrics(db.sql, { registry: all })
    const one = new Registry()
    queueMetrics(db.sql, { registry: one, queue: selected })
    expect(parse(await all.metrics()).samples.get(`iddqueue_queue_ready{queue="${queue}"}`)).toBe(1)
    await db.sql`delete from iddqueue.messages where queue = ${queue}`
    const after = parse(await all.metrics()).samples
    expect([...after.keys()].some((key) => key.includes(queue))).toBe(false)
    const zero = parse(await one.metrics()).samples
    expect(zero.get(`iddqueue_queue_ready{queue="${selected}"}`)).toBe(0)
    expect(zero.get(`iddqueue_queue_messages{queue="${selected}",state="queued"}`)).toBe(0)
  })

  it('fails the scrape when the database is unreachable instead of reporting zeros', async () => {
    const unreachable = postgres('postgres://root@127.0.0.1:1/test', {
      max: 1,
      connect_timeout: 2,
      onnotice: () => {},
    })
    try {
      const registry = new Registry()
      queueMetrics(unreachable, { registry })
      await expect(registry.metrics()).rejects.toThrow()
      const server = await serveMetrics({ registry, port: 0 })
      servers.push(server)
      const response = await fetch(server.url)
      expect(response.status).toBe(500)
      expect(await response.text()).toMatch(/^scrape failed: /)
    } finally {
      await unreachable.end()
    }
  })

  it('fails the scrape once its own PostgreSQL is stopped', { timeout: 120_000 }, async () => {
    // A server this test owns (never the shared one): up, scraped, stopped, scraped again.
    const server = await startTestDatabase({ mode: 'embedded', log: () => {} })
    const sql = postgres(server.url, { max: 1, connect_timeout: 2, onnotice: () => {} })
    try {
      await migrate(sql, { owners: [coreMigrations] })
      await insertRows(sql, 'owned', [{ state: 'queued' }])
      const registry = new Registry()
      queueMetrics(sql, { registry })
      expect(await registry.metrics()).toContain('iddqueue_queue_ready{queue="owned"} 1')
      await server.stop()
      await expect(registry.metrics()).rejects.toThrow()
    } finally {
      await sql.end({ timeout: 1 })
      await server.stop()
    }
  })

  it('names any value it refuses: a bigint, an object without a prototype, null options', async () => {
    for (const [options, text] of [
      [{ port: 1n }, 'Invalid port 1n: expected an integer from 0 to 65535'],
      [{ host: Object.create(null) }, 'Invalid host an object: expected a host name or address'],
      [null, 'Invalid serveMetrics() options null: expected an object'],
    ] as const) {
      const error = await serveMetrics(options as never).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(InvalidOptionError)
      expect((error as Error).message).toBe(text)
    }
    expect(() => queueMetrics(db.sql, null as never)).toThrow(
      'Invalid queueMetrics() options null: expected an object',
    )
  })

  it('refuses a bad path, registry, queue, source or namespace before listening or registering anything', async () => {
    for (const [options, text] of [
      [
        { path: 'metrics' },
        'Invalid path "metrics": expected a URL path starting with / (no query or fragment)',
      ],
      [
        { path: '/metrics?x=1' },
        'Invalid path "/metrics?x=1": expected a URL path starting with / (no query or fragment)',
      ],
      [{ path: 9 }, 'Invalid path 9: expected a URL path starting with / (no query or fragment)'],
      [{ registry: {} }, 'Invalid registry an object: expected a prom-client Registry'],
    ] as const) {
      const error = await serveMetrics({ port: 0, ...options } as never).catch(
        (caught: unknown) => caught,
      )
      expect(error).toBeInstanceOf(InvalidOptionError)
      expect((error as Error).message).toBe(text)
    }
    const registry = new Registry()
    const queueRule =
      "expected 1 to 128 ASCII letters, digits, '_', '.', ':' or '-', starting with a letter, digit or '_'"
    for (const [source, options, kind, text] of [
      [
        db.sql,
        { registry, queue: '' },
        InvalidIdentifierError,
        `Invalid queue name "": ${queueRule}`,
      ],
      [
        db.sql,
        { registry, queue: 5 },
        InvalidIdentifierError,
        `Invalid queue name 5: ${queueRule}`,
      ],
      [
        db.sql,
        { registry, namespace: { schema: 'no such; schema' } },
        InvalidIdentifierError,
        'Invalid schema name "no such; schema": expected 1 to 63 lowercase ASCII letters, digits or underscores, not starting with a digit',
      ],
      [
        'postgres://nowhere',
        { registry },
        InvalidOptionError,
        'Invalid statistics source: expected a postgres.js instance, a Kysely instance or a transaction of either, got string',
      ],
      [
        db.sql,
        { registry: {} },
        InvalidOptionError,
        'Invalid registry an object: expected a prom-client Registry',
      ],
    ] as const) {
      expect(() => queueMetrics(source as never, options as never)).toThrow(kind)
      expect(() => queueMetrics(source as never, options as never)).toThrow(text)
    }
    expect(registry.getMetricsAsArray()).toEqual([])
  })

  it('answers 500 when a collection fails with a value String() throws on', async () => {
    // It threw out of the rejection handler: no answer, and an unhandled rejection.
    const failing = {
      contentType: 'text/plain',
      metrics: () => Promise.reject(Object.create(null)),
    }
    const server = await serveMetrics({ registry: failing as never, port: 0 })
    servers.push(server)
    const response = await fetch(server.url)
    expect(response.status).toBe(500)
    expect(await response.text()).toBe('scrape failed: an object\n')
  })

  it('refuses a bad port or host before listening, and answers 404 elsewhere', async () => {
    await expect(serveMetrics({ port: 70_000 })).rejects.toThrow(/Invalid port 70000/)
    await expect(serveMetrics({ host: '' })).rejects.toThrow(/Invalid host/)
    const server = await serveMetrics({ registry: new Registry(), port: 0 })
    servers.push(server)
    expect((await fetch(server.url.replace('/metrics', '/other'))).status).toBe(404)
  })
})
