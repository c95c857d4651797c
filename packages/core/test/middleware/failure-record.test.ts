import { describe, expect, it } from 'vitest'
import type { ActorContext } from '../../src/index.js'
import { uniqueQueue } from '../helpers.js'
import {
  barrier,
  db,
  FAST,
  messageRow,
  type SettleSnapshot,
  settleProbe,
} from './middleware-fixture.js'

describe('failure metadata', () => {
  it('keeps exactly 2,000 characters of the error text', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    // 1,999 characters then an emoji: the cut falls inside its surrogate pair.
    const texts: Record<string, string> = {
      long: 'x'.repeat(5_000),
      exact: 'y'.repeat(2_000),
      pair: `${'z'.repeat(1_999)}\u{1F600}tail`,
    }
    const verbose = broker.actor(
      'verbose',
      (kind: string) => {
        throw new Error(texts[kind])
      },
      { queue, maxRetries: 0 },
    )
    const sent = await broker.enqueueMany(Object.keys(texts).map((kind) => verbose.message(kind)))
    const worker = broker.worker()
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    const [long, exact, pair] = await Promise.all(sent.map((m) => messageRow(m.id)))
    expect(long?.failure.message).toBe('x'.repeat(2_000))
    expect(exact?.failure.message).toBe('y'.repeat(2_000))
    expect(pair?.failure.message).toBe(`${'z'.repeat(1_999)}\ufffd`)
    expect(pair?.failure.message).toHaveLength(2_000)
  })

  it('stores an error text with \\u0000 and an unpaired surrogate, sanitised, without failing the rest of its settle batch', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const arrive = barrier(3)
    const mixed = broker.actor(
      'mixed',
      async (kind: string) => {
        // All three finish together, so their outcomes go out in one settle statement.
        await arrive()
        if (kind === 'nasty') {
          const error = new Error('bad \u0000 byte and lone \udc00 surrogate')
          error.name = 'Nasty\u0000Error'
          throw error
        }
        if (kind === 'plain') throw new Error('plain failure')
        return 'ok'
      },
      { queue, maxRetries: 0 },
    )
    const sent = await broker.enqueueMany(['nasty', 'plain', 'ok'].map((k) => mixed.message(k)))
    const worker = broker.worker({ concurrency: 3 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    const rows = await db.sql`select id, state, failure, updated_at from iddqueue.messages
      where id = any(${sent.map((m) => m.id)}::uuid[])`
    const byId = new Map(rows.map((r) => [r.id, r]))
    const [nasty, plain, ok] = sent.map((m) => byId.get(m.id)!)
    expect(nasty).toMatchObject({
      state: 'rejected',
      failure: { type: 'Nasty\ufffdError', message: 'bad \ufffd byte and lone \ufffd surrogate' },
    })
    expect(nasty?.failure.stack).toContain('bad \ufffd byte')
    expect(nasty?.failure.stack).not.toContain('\u0000')
    expect(plain).toMatchObject({ state: 'rejected', failure: { message: 'plain failure' } })
    expect(ok).toMatchObject({ state: 'done', failure: null })
    // One settle statement wrote all three: they share its now().
    expect(new Set(rows.map((r) => r.updated_at.getTime())).size).toBe(1)
  })

  it('records a thrown non-Error by its typeof and its text, without a stack', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const thrown: Record<string, unknown> = {
      string: 'just a string',
      object: { code: 42, reason: 'quota' },
      number: 7,
      undefined: undefined,
    }
    const odd = broker.actor(
      'odd',
      (kind: string) => {
        throw thrown[kind]
      },
      { queue, maxRetries: 0 },
    )
    const sent = await broker.enqueueMany(Object.keys(thrown).map((kind) => odd.message(kind)))
    const worker = broker.worker()
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    const failures = await Promise.all(sent.map(async (m) => (await messageRow(m.id)).failure))
    expect(failures).toEqual([
      { type: 'string', message: 'just a string', at: expect.any(String), attempt: 1 },
      {
        type: 'object',
        message: '{"code":42,"reason":"quota"}',
        at: expect.any(String),
        attempt: 1,
      },
      { type: 'number', message: '7', at: expect.any(String), attempt: 1 },
      { type: 'undefined', message: 'undefined', at: expect.any(String), attempt: 1 },
    ])
  })

  it('keeps 200 characters of the error type, so retryFailed({ errorType }) can select it', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const long = broker.actor(
      'long_type',
      () => {
        const error = new Error('named at length')
        error.name = `Long${'E'.repeat(300)}`
        throw error
      },
      { queue, maxRetries: 0 },
    )
    const message = await long.send()
    const worker = broker.worker()
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    const type = `Long${'E'.repeat(196)}`
    expect((await messageRow(message.id)).failure.type).toBe(type)
    expect(await broker.retryFailed({ queue, errorType: type })).toMatchObject({ retried: 1 })
  })

  it('records a thrown value that neither JSON nor String() can render', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const odd = broker.actor(
      'unrenderable',
      () => {
        // JSON.stringify throws on the bigint, String() on the missing prototype.
        throw Object.assign(Object.create(null), { amount: 1n })
      },
      { queue, maxRetries: 0 },
    )
    const message = await odd.send()
    const worker = broker.worker()
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(await messageRow(message.id)).toMatchObject({
      state: 'rejected',
      failure: { type: 'object', message: 'an object' },
    })
  })

  it('stores the stack with a failed attempt and clears the failure on success', async () => {
    const snapshots: SettleSnapshot[] = []
    const broker = db.broker({ middleware: [settleProbe(snapshots)] })
    const queue = uniqueQueue()
    const recovering = broker.actor(
      'recovering',
      function recovering(ctx: ActorContext) {
        if (ctx.attempt === 1) throw new TypeError('first attempt breaks')
        return 'ok'
      },
      { queue, maxRetries: 1, ...FAST },
    )
    const message = await recovering.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(snapshots.map((s) => s.state)).toEqual(['queued', 'done'])
    const failed = snapshots[0]!.failure!
    expect(failed).toMatchObject({ type: 'TypeError', message: 'first attempt breaks', attempt: 1 })
    expect(failed.stack).toMatch(/^TypeError: first attempt breaks\n\s+at \S*recovering/)
    expect(failed.stack).toContain('failure-record.test.ts')
    expect(await messageRow(message.id)).toMatchObject({ state: 'done', retries: 1, failure: null })
  })
})
