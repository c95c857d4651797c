import { type ActorContext, InvalidIdentifierError, InvalidOptionError } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { coordination, RateLimited } from '../src/index.js'
import { rejection, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

async function ready() {
  const coord = coordination({ purgeIntervalMs: false })
  const broker = db.broker({ plugins: [coord] })
  await broker.ready()
  return { coord, broker }
}

describe('RateLimited', () => {
  it('puts the message back, due later, without counting an attempt; a key is held', async () => {
    const { coord, broker } = await ready()
    const queue = uniqueQueue()
    const attempts: number[] = []
    const actor = broker.actor(
      'limited',
      (ctx: ActorContext) => {
        attempts.push(ctx.attempt)
        if (attempts.length < 3) throw new RateLimited({ untilMs: 50, key: 'customer:42' })
      },
      { queue, maxRetries: 0 },
    )
    const message = await actor.send()
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 20 })
    await worker.start()
    await until(() => attempts.length === 3, 20_000, 'the third delivery')
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await worker.stop()
    // maxRetries 0: a counted attempt would have rejected it.
    const [row] =
      await db.sql`select state, retries from iddqueue.messages where id = ${message.id}`
    expect(row).toMatchObject({ state: 'done', retries: 0 })
    expect(attempts).toEqual([1, 1, 1])
    const limits = await coord.listLimits()
    const held = limits.find((l) => l.scope === 'key' && l.name === 'customer:42')
    expect(held?.concurrency).toBeNull()
  })

  it('checks its options', () => {
    for (const options of [
      {},
      { untilMs: -1 },
      { untilMs: 1, until: new Date() },
      { until: new Date('x') },
      { untilMs: 1, key: '' },
    ]) {
      let error: unknown
      try {
        new RateLimited(options as never)
      } catch (caught) {
        error = caught
      }
      expect(InvalidOptionError.isInstance(error), JSON.stringify(options)).toBe(true)
    }
    expect(new RateLimited({ until: new Date(Date.now() - 1_000) }).delayMs).toBe(0)
  })
})

describe('setLimit and listLimits', () => {
  it('store, change and clear limits at runtime', async () => {
    const { coord } = await ready()
    await coord.setLimit({ queue: 'emails' }, { concurrency: 4 })
    await coord.setLimit(
      { key: 'customer:7' },
      { concurrency: 2, rate: { limit: 10, periodMs: 1_000 } },
    )
    await coord.setLimit({ actor: 'sync' }, { rate: { limit: 100, periodMs: 60_000 } })
    await coord.setLimit({ queue: 'emails' }, { concurrency: 8 })
    const listed = (await coord.listLimits()).filter((l) => l.name !== 'customer:42')
    expect(
      listed.map(({ scope, name, concurrency, rate }) => ({ scope, name, concurrency, rate })),
    ).toEqual([
      { scope: 'actor', name: 'sync', concurrency: null, rate: { limit: 100, periodMs: 60_000 } },
      { scope: 'key', name: 'customer:7', concurrency: 2, rate: { limit: 10, periodMs: 1_000 } },
      { scope: 'queue', name: 'emails', concurrency: 8, rate: null },
    ])
    await coord.setLimit({ queue: 'emails' }, { concurrency: null })
    expect((await coord.listLimits()).some((l) => l.name === 'emails')).toBe(false)
  })

  it('bad input: typed errors naming the value, nothing stored', async () => {
    const { coord } = await ready()
    const bad: [unknown, unknown][] = [
      [{ queue: 'q' }, { concurrency: 0 }],
      [{ queue: 'q' }, { concurrency: -1 }],
      [{ queue: 'q' }, { concurrency: Number.NaN }],
      [{ queue: 'q' }, { concurrency: 1.5 }],
      [{ queue: 'q' }, { rate: { limit: 1, periodMs: 0 } }],
      [{ key: 'k'.repeat(10_000) }, { concurrency: 1 }],
      [{ tenant: 'x' }, { concurrency: 1 }],
      [{ queue: 'a', key: 'b' }, { concurrency: 1 }],
      [{ queue: 'bad queue!' }, { concurrency: 1 }],
      [{ key: 'k' }, null],
    ]
    for (const [target, values] of bad) {
      const error = await rejection(coord.setLimit(target as never, values as never))
      const typed = InvalidOptionError.isInstance(error) || InvalidIdentifierError.isInstance(error)
      expect(typed, JSON.stringify([target, values])).toBe(true)
    }
    const [row] =
      await db.sql`select count(*)::int as n from iddqueue.coordination_limits where name in ('q', 'k', 'x', 'a', 'bad queue!')`
    expect(row?.n).toBe(0)
  })
})
