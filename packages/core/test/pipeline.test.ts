import { Kysely } from 'kysely'
import { PostgresJSDialect } from 'kysely-postgres-js'
import postgres from 'postgres'
import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  type ActorContext,
  type Broker,
  Group,
  IddqueueError,
  InvalidOptionError,
  MAX_COMPOSITION,
  Pipeline,
} from '../src/index.js'
import { setupDatabase, states, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

async function drain(broker: Broker, queues: string[]) {
  const worker = broker.worker({ queues, pollIntervalMs: 50 })
  await worker.start()
  await broker.join({ queues })
  await worker.stop()
}

async function rowsOf(ids: readonly string[]) {
  const rows =
    await db.sql`select id, state, args from iddqueue.messages where id = any(${[...ids]}::uuid[])`
  return new Map(rows.map((row) => [row.id as string, row]))
}

describe('pipeline', () => {
  it('passes each result to the next step as its last argument', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('pipe')
    const calls: unknown[][] = []
    const parse = broker.actor(
      'parse',
      (text: string) => {
        calls.push(['parse', text])
        return Number(text)
      },
      { queue },
    )
    const scale = broker.actor(
      'scale',
      (factor: number, value?: number, _ctx?: ActorContext) => {
        calls.push(['scale', factor, value])
        return factor * (value ?? 0)
      },
      { queue },
    )
    const label = broker.actor(
      'label',
      (prefix: string, value?: number, _ctx?: ActorContext) => {
        calls.push(['label', prefix, value])
        return `${prefix}${value}`
      },
      { queue },
    )
    const steps = [parse.message('21'), scale.message(2), label.message('n=')] as const
    const pipeline = broker.pipeline(steps)
    expectTypeOf(pipeline).toEqualTypeOf<Pipeline<string>>()
    expect(pipeline).toBeInstanceOf(Pipeline)
    expect(pipeline.messages.map((m) => m.id)).toEqual(steps.map((m) => m.id))
    expect(await pipeline.run()).toBe(pipeline)

    // Only the first step is sent, carrying the rest.
    const sent = await rowsOf(steps.map((m) => m.id))
    expect([...sent.keys()]).toEqual([steps[0].id])
    const [first] = await db.sql`select options from iddqueue.messages where id = ${steps[0].id}`
    expect(first?.options.pipeline).toMatchObject({
      id: pipeline.id,
      steps: [
        { id: steps[1].id, actor: 'scale', args: [2] },
        { id: steps[2].id, actor: 'label', args: ['n='] },
      ],
    })

    await drain(broker, [queue])
    expect(calls).toEqual([
      ['parse', '21'],
      ['scale', 2, 21],
      ['label', 'n=', 42],
    ])
    // Each step kept its id; the stored args hold the appended result.
    const done = await rowsOf(steps.map((m) => m.id))
    expect(steps.map((m) => done.get(m.id)?.state)).toEqual(['done', 'done', 'done'])
    expect(done.get(steps[2].id)?.args).toEqual(['n=', 42])
  })

  it('types a step by every argument but the last, which the previous result fills in', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('step')
    const seen: unknown[][] = []
    const fetchPrice = broker.actor('fetch_price', (sku: string) => (sku === 'lamp' ? 4_500 : 0), {
      queue,
    })
    const discount = broker.actor(
      'discount',
      (percent: number, cents: number) => {
        seen.push([percent, cents])
        return Math.round(cents * (1 - percent / 100))
      },
      { queue },
    )
    const format = broker.actor('format', (cents: number) => `€${(cents / 100).toFixed(2)}`, {
      queue,
    })
    // Required parameters all the way: step() leaves out the last one.
    expectTypeOf(discount.step).parameters.toEqualTypeOf<[percent: number]>()
    expectTypeOf(format.step).parameters.toEqualTypeOf<[]>()
    // @ts-expect-error message() still wants every argument
    discount.message(10)
    const pipeline = broker.pipeline([fetchPrice.message('lamp'), discount.step(10), format.step()])
    expectTypeOf(pipeline).toEqualTypeOf<Pipeline<string>>()
    await pipeline.run()
    await drain(broker, [queue])
    expect(seen).toEqual([[10, 4_500]])
    const done = await rowsOf(pipeline.messages.map((m) => m.id))
    expect(done.get(pipeline.messages[2]!.id)?.args).toEqual([4_050])
  })

  it('stops at a step that fails for good: the next step is never sent', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('stop')
    const ran: string[] = []
    const one = broker.actor('one', () => ran.push('one'), { queue })
    const two = broker.actor(
      'two',
      () => {
        ran.push('two')
        throw new Error('step two broke')
      },
      { queue, maxRetries: 0 },
    )
    const three = broker.actor('three', () => ran.push('three'), { queue })
    const steps = [one.message(), two.message(), three.message()]
    await broker.pipeline(steps).run()
    await drain(broker, [queue])
    expect(ran).toEqual(['one', 'two'])
    const rows = await rowsOf(steps.map((m) => m.id))
    expect(rows.get(steps[0]!.id)?.state).toBe('done')
    expect(rows.get(steps[1]!.id)?.state).toBe('rejected')
    expect(rows.has(steps[2]!.id)).toBe(false)
    expect(await states(db.sql, { queue })).toEqual({ done: 1, rejected: 1 })
  })

  it('runs a one-step pipeline, and delays the first step', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const job = broker.actor('job', () => 'only', { queue })
    const single = broker.pipeline([job.message()])
    await single.run()
    const [row] =
      await db.sql`select options from iddqueue.messages where id = ${single.messages[0]!.id}`
    expect(row?.options).toEqual({})
    await drain(broker, [queue])
    expect(await states(db.sql, { queue })).toEqual({ done: 1 })

    const later = broker.pipeline([job.message(), job.message()])
    await later.run({ delayMs: 60_000 })
    const [delayed] =
      await db.sql`select eta > now() + interval '50 seconds' as later from iddqueue.messages where id = ${later.messages[0]!.id}`
    expect(delayed?.later).toBe(true)
  })

  it('enqueues nothing when the caller transaction rolls back, and the first step on commit', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('tx')
    const job = broker.actor(
      'job',
      (n: number, previous?: number, _ctx?: ActorContext) => n + (previous ?? 0),
      {
        queue,
      },
    )
    const rolledBack = broker.pipeline([job.message(1), job.message(2)])
    await expect(
      db.sql.begin(async (tx) => {
        await rolledBack.run({ transaction: tx })
        throw new Error('abort the business transaction')
      }),
    ).rejects.toThrow('abort the business transaction')
    expect((await rowsOf(rolledBack.messages.map((m) => m.id))).size).toBe(0)

    // A Kysely transaction, committed.
    const kysely = new Kysely({
      dialect: new PostgresJSDialect({ postgres: postgres(db.url, { max: 2 }) }),
    })
    try {
      const committed = broker.pipeline([job.message(1), job.message(2)])
      await kysely.transaction().execute(async (trx) => {
        await committed.run({ transaction: trx })
      })
      expect([...(await rowsOf(committed.messages.map((m) => m.id))).keys()]).toEqual([
        committed.messages[0]!.id,
      ])
      const group = broker.group([job.message(5), job.message(6)])
      await expect(
        kysely.transaction().execute(async (trx) => {
          await group.run({ transaction: trx })
          throw new Error('no')
        }),
      ).rejects.toThrow('no')
      expect((await rowsOf(group.messages.map((m) => m.id))).size).toBe(0)
    } finally {
      await kysely.destroy()
    }
  })

  it('refuses empty, oversized, duplicate or foreign entries', () => {
    const broker = db.broker()
    const job = broker.actor('job', () => 1)
    const refused = (fn: () => unknown, pattern: RegExp) => {
      let error: unknown
      try {
        fn()
      } catch (caught) {
        error = caught
      }
      expect(InvalidOptionError.isInstance(error)).toBe(true)
      expect((error as Error).message).toMatch(pattern)
    }
    refused(() => broker.pipeline([]), /Invalid pipeline of 0 messages: expected 1 to 1000/)
    refused(
      () => broker.pipeline(Array.from({ length: MAX_COMPOSITION + 1 }, () => job.message())),
      /Invalid pipeline of 1001 messages/,
    )
    refused(
      () => broker.group(Array.from({ length: MAX_COMPOSITION + 1 }, () => job.message())),
      /Invalid group of 1001 messages/,
    )
    refused(
      () => broker.pipeline([job.message(), { id: 'x' } as never]),
      /Invalid pipeline entry 1: expected a Message/,
    )
    const message = job.message()
    refused(() => broker.pipeline([message, message]), /appears twice/)
    refused(() => broker.group([message, message]), /appears twice/)
    refused(
      () =>
        broker.pipeline([
          job.messageWithOptions({ args: [], options: { pipeline: { id: 'x', steps: [] } } }),
        ]),
      /already belongs to a pipeline/,
    )
    expect(
      broker.pipeline(Array.from({ length: MAX_COMPOSITION }, () => job.message())),
    ).toBeTruthy()
  })

  it('needs the results plugin for its result', async () => {
    const broker = db.broker()
    const job = broker.actor('job', () => 1)
    const pipeline = broker.pipeline([job.message()])
    await expect(pipeline.result({ block: false })).rejects.toSatisfy(
      (error) =>
        IddqueueError.isInstance(error) &&
        /needs the results plugin/.test((error as Error).message),
    )
    const group = broker.group([job.message()])
    await expect(group.results()).rejects.toSatisfy((error) => IddqueueError.isInstance(error))
  })
})

describe('group', () => {
  it('sends every message at once and counts the completed ones', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('group')
    const seen: number[] = []
    const square = broker.actor(
      'square',
      (n: number) => {
        seen.push(n)
        return n * n
      },
      { queue },
    )
    const n = 25
    const group = broker.group(Array.from({ length: n }, (_, i) => square.message(i)))
    expect(group).toBeInstanceOf(Group)
    expectTypeOf(group.results).returns.resolves.toEqualTypeOf<number[]>()
    expect(await group.completedCount()).toBe(0)
    expect(await group.run()).toBe(group)
    expect(await states(db.sql, { queue })).toEqual({ queued: n })
    expect(await group.completedCount()).toBe(0)
    const worker = broker.worker({ concurrency: 4 })
    await worker.start()
    await until(async () => (await group.completedCount()) === n, 10_000, 'every message done')
    await worker.stop()
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i))
  })

  it('types results in submission order and allows an empty group', async () => {
    const broker = db.broker()
    const count = broker.actor('count', (text: string) => text.length)
    const shout = broker.actor('shout', (text: string) => text.toUpperCase())
    const group = broker.group([count.message('abc'), shout.message('abc')] as const)
    expectTypeOf(group.results).returns.resolves.toEqualTypeOf<[number, string]>()
    const empty = broker.group([])
    await empty.run()
    expect(await empty.completedCount()).toBe(0)
    expect(await empty.results()).toEqual([])
  })
})
