import { namespace } from '@iddqueue/schema'
import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  type Broker,
  createBroker,
  type EnqueueEvent,
  type IddqueuePlugin,
  InvalidOptionError,
  type Message,
  type SendOptions,
} from '../src/index.js'
import { collectNotifications, setupDatabase, until } from './helpers.js'

const db = setupDatabase()
/** The wake-up channel of the default namespace (what `broker.namespace.channel('wake')` gives). */
const WAKE = namespace().channel('wake')
const TTL = 60_000

let wake: Awaited<ReturnType<typeof collectNotifications>> | undefined
/** The caller's own pool, for transactions. */
let caller: postgres.Sql

beforeAll(() => {
  caller = postgres(db.url, { max: 4, onnotice: () => {} })
})

afterAll(async () => {
  await caller?.end()
})

beforeEach(async () => {
  await db.sql`truncate iddqueue.messages, iddqueue.deduplication`
  wake = await collectNotifications(db.sql, WAKE)
})

afterEach(async () => {
  vi.restoreAllMocks()
  await wake?.stop()
  wake = undefined
})

/** Wake-ups received, once every broker sent those of its committed sends (decision 0010). */
const wakeUps = async () => {
  await db.wakeUpsSent()
  return wake!.settled()
}

async function messageIds(): Promise<string[]> {
  const rows = await db.sql`select id from iddqueue.messages order by id`
  return rows.map((r) => r.id as string)
}

async function dedupRows() {
  return db.sql`select queue, key, message_id, message, expires_at, created_at
    from iddqueue.deduplication order by queue, key`
}

/** A broker whose enqueue middleware and message:enqueued events are recorded. */
function observedBroker(options: { url?: string } = {}) {
  const hooked: EnqueueEvent[] = []
  const enqueued: string[] = []
  const spy: IddqueuePlugin = {
    name: 'spy',
    middleware: {
      async enqueue(event, next) {
        hooked.push(event)
        await next()
      },
    },
  }
  const broker = db.broker({ plugins: [spy], ...options })
  broker.on('message:enqueued', ({ message }) => enqueued.push(message.id))
  return { broker, hooked, enqueued }
}

function sameMessage(actual: Message, expected: Message): void {
  expect(actual.toJSON()).toEqual(expected.toJSON())
  expect(actual.eta?.getTime()).toBe(expected.eta?.getTime())
}

describe('a duplicate', () => {
  it('returns the original message and writes, wakes and runs nothing', async () => {
    const { broker, hooked, enqueued } = observedBroker()
    const report = broker.actor('report', (name: string, _opts: { full: boolean }) => name, {
      queue: 'reports',
    })
    const original = await report.sendWithOptions({
      args: ['daily', { full: true }],
      delayMs: 5_000,
      priority: 4,
      options: { tag: 'first' },
      dedupKey: 'report:daily',
      dedupTtlMs: TTL,
    })
    expect(original.eta).toBeInstanceOf(Date)
    expect(await wakeUps()).toEqual(['reports'])
    const rowsBefore = await db.sql`select * from iddqueue.messages`
    const keyBefore = await dedupRows()
    expect(keyBefore).toHaveLength(1)
    expect(keyBefore[0]).toMatchObject({
      queue: 'reports',
      key: 'report:daily',
      message_id: original.id,
    })

    const duplicate = await report.sendWithOptions({
      args: ['weekly', { full: false }],
      delayMs: 10,
      priority: 9,
      options: { tag: 'second' },
      dedupKey: 'report:daily',
      dedupTtlMs: 1_000,
    })
    sameMessage(duplicate, original)
    expect(duplicate.args).toEqual(['daily', { full: true }])
    expect(duplicate.priority).toBe(4)
    expect(duplicate.options).toEqual({ tag: 'first' })

    // Nothing written: same rows, same key (its TTL was not refreshed).
    expect(await db.sql`select * from iddqueue.messages`).toEqual(rowsBefore)
    expect(await dedupRows()).toEqual(keyBefore)
    expect(await wakeUps()).toEqual([])
    expect(hooked).toHaveLength(1)
    expect(hooked[0]!.messages.map((m) => m.id)).toEqual([original.id])
    expect(enqueued).toEqual([original.id])
    // The original comes back bound to the broker, like any sent message.
    await expect(duplicate.result()).rejects.toThrow('message.result() needs the results plugin')
  })

  it('is found through every way of sending, and from another broker', async () => {
    const one = observedBroker()
    const two = observedBroker()
    const job = one.broker.actor('job', (n: number) => n)
    const jobElsewhere = two.broker.actor('job', (n: number) => n)
    const dedup = { dedupKey: 'job:1', dedupTtlMs: TTL }
    const original = await job.sendWithOptions({ args: [1], ...dedup })
    const viaEnqueue = await one.broker.enqueue(job.message(2), dedup)
    const [viaBatch] = await one.broker.enqueueMany([{ message: job.message(3), ...dedup }])
    const viaOtherBroker = await jobElsewhere.sendWithOptions({ args: [4], ...dedup })
    const viaUntyped = await two.broker.enqueue(two.broker.message('job', [5]), dedup)
    for (const duplicate of [viaEnqueue, viaBatch!, viaOtherBroker, viaUntyped]) {
      sameMessage(duplicate, original)
    }
    expect(await messageIds()).toEqual([original.id])
    expect(two.hooked).toEqual([])
    expect(two.enqueued).toEqual([])
    expect(await wakeUps()).toEqual(['default'])
  })

  it('keeps an absolute eta of the original', async () => {
    const broker = db.broker()
    const at = broker.actor('at', (n: number) => n)
    const eta = new Date(Date.now() + 86_400_000)
    const original = await at.sendWithOptions({ args: [1], eta, dedupKey: 'at', dedupTtlMs: TTL })
    const duplicate = await at.sendWithOptions({ args: [2], dedupKey: 'at', dedupTtlMs: TTL })
    expect(duplicate.eta).toEqual(eta)
    sameMessage(duplicate, original)
  })
})

describe('deduplication keys', () => {
  it('are scoped to the queue, not to the actor', async () => {
    const broker = db.broker()
    const a = broker.actor('a', (n: number) => n, { queue: 'q1' })
    const b = broker.actor('b', (n: number) => n, { queue: 'q1' })
    const c = broker.actor('c', (n: number) => n, { queue: 'q2' })
    const dedup = { dedupKey: 'shared', dedupTtlMs: TTL }
    const first = await a.sendWithOptions({ args: [1], ...dedup })
    // Another actor on the same queue: a duplicate of the first.
    const sameQueue = await b.sendWithOptions({ args: [2], ...dedup })
    expect(sameQueue.id).toBe(first.id)
    expect(sameQueue.actor).toBe('a')
    // Another queue: a new message.
    const otherQueue = await c.sendWithOptions({ args: [3], ...dedup })
    expect(otherQueue.id).not.toBe(first.id)
    expect(otherQueue.actor).toBe('c')
    const rows = await db.sql`select actor, queue from iddqueue.messages order by id`
    expect(rows).toEqual([
      { actor: 'a', queue: 'q1' },
      { actor: 'c', queue: 'q2' },
    ])
    expect((await dedupRows()).map((r) => [r.queue, r.key, r.message_id])).toEqual([
      ['q1', 'shared', first.id],
      ['q2', 'shared', otherQueue.id],
    ])
    expect((await wakeUps()).sort()).toEqual(['q1', 'q2'])
  })

  it('expire after dedupTtlMs, measured by PostgreSQL', async () => {
    const broker = db.broker()
    const tick = broker.actor('tick', (n: number) => n)
    const dedup = { dedupKey: 'tick', dedupTtlMs: 300 }
    const first = await tick.sendWithOptions({ args: [1], ...dedup })
    expect((await tick.sendWithOptions({ args: [2], ...dedup })).id).toBe(first.id)
    const [key] = await dedupRows()
    const ttl = (key!.expires_at as Date).getTime() - (key!.created_at as Date).getTime()
    expect(ttl).toBeGreaterThanOrEqual(300)
    expect(ttl).toBeLessThan(400)

    // The key was made a second ago: PostgreSQL's clock says it expired.
    await db.sql`update iddqueue.deduplication
      set created_at = created_at - interval '1 second', expires_at = expires_at - interval '1 second'`
    const second = await tick.sendWithOptions({ args: [3], ...dedup })
    expect(second.id).not.toBe(first.id)
    expect(second.args).toEqual([3])
    expect(await messageIds()).toEqual([first.id, second.id].sort())
    const [renewed] = await dedupRows()
    expect(renewed!.message_id).toBe(second.id)
    expect((renewed!.expires_at as Date).getTime()).toBeGreaterThan(
      (key!.expires_at as Date).getTime(),
    )
    expect(await wakeUps()).toEqual(['default', 'default'])
  })

  it('do not expire by the client clock', async () => {
    const broker = db.broker()
    const job = broker.actor('job', (n: number) => n)
    const dedup = { dedupKey: 'clock', dedupTtlMs: TTL }
    const first = await job.sendWithOptions({ args: [1], ...dedup })
    // The client believes two TTLs have passed; PostgreSQL knows better.
    const now = Date.now()
    vi.spyOn(Date, 'now').mockImplementation(() => now + 2 * TTL)
    const again = await job.sendWithOptions({ args: [2], ...dedup })
    expect(again.id).toBe(first.id)
    expect(await messageIds()).toEqual([first.id])
  })

  it('publish exactly one message for twenty concurrent senders', async () => {
    const brokers = [db.broker(), db.broker(), db.broker(), db.broker()]
    const actors = brokers.map((broker) =>
      broker.actor('race', (n: number) => n, { queue: 'race' }),
    )
    for (const round of [1, 2, 3]) {
      const sends = Array.from({ length: 20 }, (_, i) =>
        actors[i % actors.length]!.sendWithOptions({
          args: [i],
          dedupKey: `race:${round}`,
          dedupTtlMs: TTL,
        }),
      )
      const sent = await Promise.all(sends)
      const ids = new Set(sent.map((m) => m.id))
      expect(ids.size).toBe(1)
      const [row] = await db.sql`select id, args from iddqueue.messages
        where id = ${sent[0]!.id}`
      // Every sender got the winner's arguments back.
      expect(sent.every((m) => m.args[0] === row!.args[0])).toBe(true)
    }
    const [count] = await db.sql`select count(*)::int as n from iddqueue.messages`
    expect(count!.n).toBe(3)
    expect(await wakeUps()).toEqual(['race', 'race', 'race'])
  })

  it('do not deadlock two concurrent batches claiming the same keys in opposite orders', async () => {
    const one = db.broker()
    const two = db.broker()
    const a = one.actor('cross', (n: number) => n)
    const b = two.actor('cross', (n: number) => n)
    const keys = Array.from({ length: 20 }, (_, i) => `k${i}`)
    for (const round of [1, 2, 3]) {
      const entries = (actor: typeof a, order: string[]) =>
        order.map((key) => ({
          message: actor.message(round),
          dedupKey: `${round}:${key}`,
          dedupTtlMs: TTL,
        }))
      const [left, right] = await Promise.all([
        one.enqueueMany(entries(a, keys)),
        two.enqueueMany(entries(b, [...keys].reverse())),
      ])
      // Whoever won each key, both see the same message for it.
      expect(left.map((m) => m.id)).toEqual(right.map((m) => m.id).reverse())
    }
    const [count] = await db.sql`select count(*)::int as n from iddqueue.messages`
    expect(count!.n).toBe(60)
  })
})

describe('batches with deduplicated entries', () => {
  it('return originals in input order, atomically', async () => {
    const { broker, hooked, enqueued } = observedBroker()
    const job = broker.actor('job', (s: string) => s, { queue: 'jobs' })
    const other = broker.actor('other', (s: string) => s, { queue: 'others' })
    const taken = await job.sendWithOptions({ args: ['taken'], dedupKey: 'taken', dedupTtlMs: TTL })
    hooked.length = 0
    enqueued.length = 0
    await wakeUps()

    const entries = [
      job.message('plain 1'),
      { message: job.message('new'), dedupKey: 'new', dedupTtlMs: TTL, delayMs: 1_000 },
      { message: other.message('plain 2'), priority: 3 },
      { message: job.message('new again'), dedupKey: 'new', dedupTtlMs: TTL },
      { message: job.message('taken again'), dedupKey: 'taken', dedupTtlMs: TTL },
      { message: other.message('other queue'), dedupKey: 'new', dedupTtlMs: TTL },
      job.message('plain 3'),
    ]
    const sent = await broker.enqueueMany(entries)
    expect(sent.map((m) => m.args[0])).toEqual([
      'plain 1',
      'new',
      'plain 2',
      'new',
      'taken',
      'other queue',
      'plain 3',
    ])
    expect(sent[3]!.id).toBe(sent[1]!.id)
    sameMessage(sent[3]!, sent[1]!)
    sameMessage(sent[4]!, taken)
    expect(sent[5]!.id).not.toBe(sent[1]!.id)

    const fresh = [sent[0]!, sent[1]!, sent[2]!, sent[5]!, sent[6]!].map((m) => m.id)
    expect(await messageIds()).toEqual([taken.id, ...fresh].sort())
    // One write of the fresh messages: one middleware run, one event each, one wake-up per queue.
    expect(hooked).toHaveLength(1)
    expect(hooked[0]!.messages.map((m) => m.id)).toEqual(fresh)
    expect(enqueued).toEqual(fresh)
    expect((await wakeUps()).sort()).toEqual(['jobs', 'others'])
    expect((await dedupRows()).map((r) => [r.queue, r.key, r.message_id])).toEqual([
      ['jobs', 'new', sent[1]!.id],
      ['jobs', 'taken', taken.id],
      ['others', 'new', sent[5]!.id],
    ])
  })

  it('write only the duplicates nothing: an all-duplicate batch runs no middleware', async () => {
    const { broker, hooked, enqueued } = observedBroker()
    const job = broker.actor('job', (n: number) => n)
    const first = await job.sendWithOptions({ args: [1], dedupKey: 'a', dedupTtlMs: TTL })
    hooked.length = 0
    enqueued.length = 0
    await wakeUps()
    const sent = await broker.enqueueMany([
      { message: job.message(2), dedupKey: 'a', dedupTtlMs: TTL },
      { message: job.message(3), dedupKey: 'a', dedupTtlMs: TTL },
    ])
    expect(sent.map((m) => m.id)).toEqual([first.id, first.id])
    expect(hooked).toEqual([])
    expect(enqueued).toEqual([])
    expect(await wakeUps()).toEqual([])
    expect(await messageIds()).toEqual([first.id])
  })

  it('claim no key when the write fails', async () => {
    let fail = true
    const broker = db.broker({
      middleware: [
        {
          async enqueue(_event, next) {
            await next()
            if (fail) throw new Error('write refused')
          },
        },
      ],
    })
    const job = broker.actor('job', (n: number) => n)
    await expect(
      broker.enqueueMany([
        job.message(1),
        { message: job.message(2), dedupKey: 'k', dedupTtlMs: TTL },
      ]),
    ).rejects.toThrow('write refused')
    expect(await messageIds()).toEqual([])
    expect(await dedupRows()).toEqual([])
    expect(await wakeUps()).toEqual([])
    fail = false
    const [, sent] = await broker.enqueueMany([
      job.message(3),
      { message: job.message(4), dedupKey: 'k', dedupTtlMs: TTL },
    ])
    expect(sent!.args).toEqual([4])
    expect((await dedupRows()).map((r) => r.message_id)).toEqual([sent!.id])
  })
})

describe('refused deduplication options', () => {
  it.each<[SendOptions, string]>([
    [
      { dedupKey: 'k' },
      'invalid dedupTtlMs undefined: expected a positive integer of milliseconds (at most 9007199254740991) with dedupKey',
    ],
    [{ dedupTtlMs: 1_000 }, 'invalid dedupKey undefined: expected a non-empty string'],
    [{ dedupKey: '', dedupTtlMs: 1_000 }, 'invalid dedupKey "": expected a non-empty string'],
    [{ dedupKey: 'k', dedupTtlMs: 0 }, 'invalid dedupTtlMs 0: expected a positive integer'],
    [{ dedupKey: 'k', dedupTtlMs: -5 }, 'invalid dedupTtlMs -5'],
    [{ dedupKey: 'k', dedupTtlMs: 1.5 }, 'invalid dedupTtlMs 1.5'],
    [{ dedupKey: 'k', dedupTtlMs: Number.NaN }, 'invalid dedupTtlMs NaN'],
    [{ dedupKey: 'k', dedupTtlMs: 1e16 }, 'invalid dedupTtlMs 10000000000000000'],
    [
      { dedupKey: 'x'.repeat(513), dedupTtlMs: 1_000 },
      `invalid dedupKey "${'x'.repeat(256)}…": expected a non-empty string of at most 512 characters, without \\u0000 or unpaired surrogates`,
    ],
    [{ dedupKey: 'a\u0000b', dedupTtlMs: 1_000 }, 'invalid dedupKey "a\\u0000b"'],
    [{ dedupKey: 'a\ud800', dedupTtlMs: 1_000 }, 'invalid dedupKey "a\\ud800"'],
    [{ dedupKey: 42 as unknown as string, dedupTtlMs: 1_000 }, 'invalid dedupKey 42'],
    // JSON.stringify throws on a bigint: the refusal must still be the typed error.
    [{ dedupKey: 0n as unknown as string, dedupTtlMs: 1_000 }, 'invalid dedupKey 0n'],
    [{ dedupKey: Object.create(null), dedupTtlMs: 1_000 }, 'invalid dedupKey an object'],
    [{ dedupMode: 1n as never, dedupKey: 'k', dedupTtlMs: 1_000 }, 'invalid dedupMode 1n'],
  ])('refuses %o before any SQL', async (options, text) => {
    const queries: string[] = []
    const sql = postgres(db.url, {
      max: 1,
      onnotice: () => {},
      debug: (_connection, query) => queries.push(query),
    })
    const broker: Broker = createBroker({ sql })
    try {
      const job = broker.actor('job', (n: number) => n)
      const single = await job.sendWithOptions({ args: [1], ...options }).catch((e: unknown) => e)
      expect(InvalidOptionError.isInstance(single)).toBe(true)
      expect((single as Error).message).toContain(`send to job: ${text}`)
      const batch = await broker
        .enqueueMany([job.message(0), { message: job.message(1), ...options }])
        .catch((e: unknown) => e)
      expect(InvalidOptionError.isInstance(batch)).toBe(true)
      expect((batch as Error).message).toContain(`batch entry 1 (job): ${text}`)
      expect(queries).toEqual([])
    } finally {
      await broker.close()
      await sql.end()
    }
    expect(await messageIds()).toEqual([])
    expect(await dedupRows()).toEqual([])
  })

  it('accepts a key of 512 characters and keeps distinct keys distinct', async () => {
    const broker = db.broker()
    const job = broker.actor('job', (n: number) => n)
    const long = 'é'.repeat(512)
    const a = await job.sendWithOptions({ args: [1], dedupKey: long, dedupTtlMs: TTL })
    const b = await job.sendWithOptions({
      args: [2],
      dedupKey: `${long.slice(1)}e`,
      dedupTtlMs: TTL,
    })
    const emoji = await job.sendWithOptions({ args: [3], dedupKey: '🎉', dedupTtlMs: TTL })
    expect(new Set([a.id, b.id, emoji.id]).size).toBe(3)
    expect((await dedupRows()).map((r) => r.key).sort()).toEqual(
      [long, `${long.slice(1)}e`, '🎉'].sort(),
    )
  })
})

describe('deduplication in a caller transaction', () => {
  it('releases the key when the transaction rolls back', async () => {
    const broker = db.broker()
    const job = broker.actor('job', (n: number) => n)
    const dedup = { dedupKey: 'tx', dedupTtlMs: TTL }
    let inside: Message | undefined
    await expect(
      caller.begin(async (tx) => {
        inside = await job.sendWithOptions({ args: [1], ...dedup, transaction: tx })
        // A second send in the same transaction sees the key taken.
        const again = await job.sendWithOptions({ args: [2], ...dedup, transaction: tx })
        expect(again.id).toBe(inside.id)
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    expect(await messageIds()).toEqual([])
    expect(await dedupRows()).toEqual([])
    expect(await wakeUps()).toEqual([])

    const after = await job.sendWithOptions({ args: [3], ...dedup })
    expect(after.id).not.toBe(inside!.id)
    expect(await messageIds()).toEqual([after.id])
    expect(await wakeUps()).toEqual(['default'])
  })

  it('holds the key once the transaction commits', async () => {
    const broker = db.broker()
    const job = broker.actor('job', (n: number) => n)
    const dedup = { dedupKey: 'tx', dedupTtlMs: TTL }
    const inside = await caller.begin((tx) =>
      job.sendWithOptions({ args: [1], ...dedup, transaction: tx }),
    )
    const after = await job.sendWithOptions({ args: [2], ...dedup })
    sameMessage(after, inside)
    expect(await messageIds()).toEqual([inside.id])
  })

  it.each([
    ['commits', true],
    ['rolls back', false],
  ])('makes a concurrent sender wait for the transaction, which then %s', async (_what, commit) => {
    const broker = db.broker()
    const job = broker.actor('job', (n: number) => n)
    const dedup = { dedupKey: 'wait', dedupTtlMs: TTL }
    let release!: () => void
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    let claimed!: () => void
    const claimedKey = new Promise<void>((resolve) => {
      claimed = resolve
    })
    let inside: Message | undefined
    const transaction = caller
      .begin(async (tx) => {
        inside = await job.sendWithOptions({ args: [1], ...dedup, transaction: tx })
        claimed()
        await released
        if (!commit) throw new Error('roll back')
      })
      .catch((error: unknown) => error)

    await claimedKey
    let settled = false
    const concurrent = job.sendWithOptions({ args: [2], ...dedup }).finally(() => {
      settled = true
    })
    // Blocked on the uncommitted claim: its connection waits on a lock.
    await until(
      async () =>
        (
          await db.sql`select 1 from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'`
        ).length > 0,
      10_000,
      'the concurrent send to wait on the key',
    )
    expect(settled).toBe(false)
    release()
    await transaction
    const result = await concurrent
    if (commit) {
      sameMessage(result, inside!)
      expect(await messageIds()).toEqual([inside!.id])
    } else {
      expect(result.id).not.toBe(inside!.id)
      expect(result.args).toEqual([2])
      expect(await messageIds()).toEqual([result.id])
    }
    expect(await wakeUps()).toEqual(['default'])
  })
})
