import { type Broker, InvalidOptionError } from '@iddqueue/core'
import { context, type SpanContext, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type TraceMode, tracing } from '../src/index.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()
const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const contextManager = new AsyncLocalStorageContextManager()
const tracer = provider.getTracer('test')

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable())
})
afterAll(async () => {
  context.disable()
  await provider.shutdown()
})
beforeEach(() => exporter.reset())

const spans = (name: string): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((span) => span.name === name)

/** Runs `fn` inside an active span standing for the caller's request; returns its context. */
async function inRequest(fn: () => Promise<unknown>): Promise<SpanContext> {
  return tracer.startActiveSpan('request', async (span) => {
    await fn()
    span.end()
    return span.spanContext()
  })
}

async function storedTrace(id: string) {
  const [row] =
    await db.sql`select options->'trace' as trace from iddqueue.messages where id = ${id}`
  return row!.trace as { traceparent: string; tracestate?: string } | null
}

async function drain(broker: Broker, queue: string) {
  const worker = broker.worker({ queues: [queue], concurrency: 2, pollIntervalMs: 50 })
  await worker.start()
  await broker.join({ queues: [queue], timeoutMs: 20_000 })
  await worker.stop()
}

function tracedBroker(traceMode?: TraceMode) {
  return db.broker({
    plugins: [tracing({ tracerProvider: provider, ...(traceMode ? { traceMode } : {}) })],
  })
}

describe('tracing', () => {
  it("writes the send span's context with the message and links the process span to it (link mode)", async () => {
    const broker = tracedBroker()
    const queue = uniqueQueue('tr')
    const job = broker.actor('traced', () => {}, { queue })
    let id = ''
    const request = await inRequest(async () => {
      id = (await job.send()).id
    })
    const [send] = spans(`send ${queue}`)
    expect(send).toBeDefined()
    expect(send!.kind).toBe(SpanKind.PRODUCER)
    expect(send!.spanContext().traceId).toBe(request.traceId)
    expect(send!.parentSpanContext?.spanId).toBe(request.spanId)
    expect(send!.attributes).toMatchObject({
      'messaging.system': 'iddqueue',
      'messaging.operation.name': 'send',
      'messaging.operation.type': 'send',
      'messaging.destination.name': queue,
      'messaging.message.id': id,
    })
    const stored = await storedTrace(id)
    expect(stored?.traceparent).toBe(
      `00-${send!.spanContext().traceId}-${send!.spanContext().spanId}-01`,
    )

    await drain(broker, queue)
    const [process] = spans(`process ${queue}`)
    expect(process!.kind).toBe(SpanKind.CONSUMER)
    expect(process!.spanContext().traceId).not.toBe(request.traceId)
    expect(process!.parentSpanContext).toBeUndefined()
    expect(process!.links.map((l) => l.context.spanId)).toEqual([send!.spanContext().spanId])
    expect(process!.attributes).toMatchObject({
      'messaging.system': 'iddqueue',
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.destination.name': queue,
      'messaging.message.id': id,
    })
  })

  it('parents the process span on the creation context in parent mode, with error.type on failure', async () => {
    const broker = tracedBroker('parent')
    const queue = uniqueQueue('tp')
    const job = broker.actor(
      'failing',
      () => {
        throw new RangeError('out of range')
      },
      { queue, maxRetries: 0 },
    )
    await inRequest(() => job.send())
    await drain(broker, queue)
    const [send] = spans(`send ${queue}`)
    const [process] = spans(`process ${queue}`)
    expect(process!.spanContext().traceId).toBe(send!.spanContext().traceId)
    expect(process!.parentSpanContext?.spanId).toBe(send!.spanContext().spanId)
    expect(process!.attributes['error.type']).toBe('RangeError')
    expect(process!.status.code).toBe(SpanStatusCode.ERROR)
  })

  it('keeps the creation context across retries: parent first, then linked (parent-first-attempt)', async () => {
    const broker = tracedBroker('parent-first-attempt')
    const queue = uniqueQueue('tf')
    let runs = 0
    const job = broker.actor(
      'flaky',
      () => {
        if (runs++ === 0) throw new Error('first attempt fails')
      },
      { queue, maxRetries: 2, minBackoffMs: 1, maxBackoffMs: 5 },
    )
    await inRequest(() => job.send())
    await drain(broker, queue)
    const send = spans(`send ${queue}`)[0]!.spanContext()
    const runsByAttempt = spans(`process ${queue}`).sort(
      (a, b) => Number(a.attributes['iddqueue.attempt']) - Number(b.attributes['iddqueue.attempt']),
    )
    expect(runsByAttempt).toHaveLength(2)
    expect(runsByAttempt[0]!.parentSpanContext?.spanId).toBe(send.spanId)
    expect(runsByAttempt[0]!.attributes['error.type']).toBe('Error')
    expect(runsByAttempt[1]!.spanContext().traceId).not.toBe(send.traceId)
    expect(runsByAttempt[1]!.links[0]?.context.spanId).toBe(send.spanId)
  })

  it('traces a batch as one send span and a send inside a caller transaction', async () => {
    const broker = tracedBroker()
    const queue = uniqueQueue('tb')
    const job = broker.actor('batched', () => {}, { queue })
    const sent = await broker.enqueueMany([job.message(), job.message(), job.message()])
    const [batch] = spans(`send ${queue}`)
    expect(batch!.attributes['messaging.batch.message_count']).toBe(3)
    expect(batch!.attributes['messaging.message.id']).toBeUndefined()
    const traceparent = `00-${batch!.spanContext().traceId}-${batch!.spanContext().spanId}-01`
    for (const message of sent)
      expect((await storedTrace(message.id))?.traceparent).toBe(traceparent)

    exporter.reset()
    let id = ''
    const request = await inRequest(() =>
      db.sql.begin(async (tx) => {
        id = (await job.sendWithOptions({ args: [], transaction: tx })).id
      }),
    )
    const [send] = spans(`send ${queue}`)
    expect(send!.spanContext().traceId).toBe(request.traceId)
    expect((await storedTrace(id))?.traceparent).toContain(request.traceId)
  })

  it('keeps the creation context through a pipeline', async () => {
    const broker = tracedBroker('parent')
    const queue = uniqueQueue('tl')
    const first = broker.actor('first', () => 1, { queue })
    const second = broker.actor('second', (n: number) => n + 1, { queue })
    const request = await inRequest(() => broker.pipeline([first.message(), second.step()]).run())
    await drain(broker, queue)
    const processes = spans(`process ${queue}`)
    expect(processes).toHaveLength(2)
    for (const span of processes) expect(span.spanContext().traceId).toBe(request.traceId)
    // The second step's send, written by the first step's settle, joins the same trace.
    const sends = spans(`send ${queue}`)
    expect(sends).toHaveLength(2)
    for (const span of sends) expect(span.spanContext().traceId).toBe(request.traceId)
    const rows =
      await db.sql`select options->'trace'->>'traceparent' as tp from iddqueue.messages where queue = ${queue}`
    expect(rows).toHaveLength(2)
    expect(rows[0]!.tp).toBe(rows[1]!.tp)
  })

  it('stores nothing without a valid context and refuses a bad traceMode', async () => {
    const broker = db.broker({ plugins: [tracing({ tracerProvider: trace.getTracerProvider() })] })
    const queue = uniqueQueue('tn')
    const job = broker.actor('untraced', () => {}, { queue })
    // The global provider is the no-op one here: no span, nothing written.
    const message = await job.send()
    expect(await storedTrace(message.id)).toBeNull()
    expect(() => tracing({ traceMode: 'child' as TraceMode })).toThrow(InvalidOptionError)
  })

  it.each([
    [
      { traceMode: 1n },
      "Invalid traceMode 1n: expected 'link', 'parent' or 'parent-first-attempt'",
    ],
    [
      { traceMode: Object.create(null) },
      "Invalid traceMode an object: expected 'link', 'parent' or 'parent-first-attempt'",
    ],
    [null, 'Invalid tracing() options null: expected an object'],
  ])('names any value it refuses: %o', (options, text) => {
    expect(() => tracing(options as never)).toThrow(
      expect.objectContaining({ name: 'InvalidOptionError', message: text }),
    )
  })

  it('ends the process span of a handler that throws a value String() throws on', async () => {
    const broker = tracedBroker('link')
    const queue = uniqueQueue('tx')
    const job = broker.actor(
      'odd',
      () => {
        throw Object.create(null)
      },
      { queue, maxRetries: 0 },
    )
    const message = await job.send()
    await drain(broker, queue)
    const [process] = spans(`process ${queue}`)
    expect(process!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'an object' })
    expect(process!.attributes['error.type']).toBe('_OTHER')
    const [row] = await db.sql`select state from iddqueue.messages where id = ${message.id}`
    expect(row?.state).toBe('rejected')
  })
})
