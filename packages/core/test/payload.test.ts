import { namespace } from '@iddqueue/schema'
import postgres from 'postgres'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  type ActorContext,
  type Broker,
  createBroker,
  DEFAULT_MAX_PAYLOAD_BYTES,
  type IddqueuePlugin,
  InvalidOptionError,
  InvalidPayloadError,
  MAX_PAYLOAD_DEPTH,
  PayloadTooLargeError,
} from '../src/index.js'
import { collectNotifications, setupDatabase, until } from './helpers.js'

const db = setupDatabase()
/** The wake-up channel of the default namespace (what `broker.namespace.channel('wake')` gives). */
const WAKE = namespace().channel('wake')

let wake: Awaited<ReturnType<typeof collectNotifications>> | undefined
let written = 0

/** Counts the batches that reached the enqueue middleware (none should, for a refusal). */
const counting: IddqueuePlugin = {
  name: 'counting',
  middleware: {
    async enqueue(_event, next) {
      written++
      await next()
    },
  },
}

beforeEach(async () => {
  await db.sql`truncate iddqueue.messages, iddqueue.deduplication`
  written = 0
  wake = await collectNotifications(db.sql, WAKE)
})

afterEach(async () => {
  await wake?.stop()
  wake = undefined
})

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

function cyclic(): Record<string, unknown> {
  const node: Record<string, unknown> = { name: 'node' }
  node.self = node
  return node
}

function deepCycle(): Record<string, unknown> {
  const root: Record<string, unknown> = { items: [] }
  ;(root.items as unknown[]).push({ parent: root })
  return root
}

/** [1, <hole>, 3]: a sparse array reads undefined at index 1. */
function holey(): number[] {
  const array = new Array<number>(3)
  array[0] = 1
  array[2] = 3
  return array
}

/** A broker with a catch-all actor, and a sentinel actor on another queue. */
function brokerWithActors(options: { maxPayloadBytes?: number } = {}) {
  const broker = db.broker({ plugins: [counting], ...options })
  const any = broker.actor('any_args', (...args: unknown[]) => args.length, { queue: 'payloads' })
  const sentinel = broker.actor('sentinel', () => 'ok', { queue: 'sentinel' })
  return { broker, any, sentinel }
}

async function messageCount(): Promise<number> {
  const [row] = await db.sql`select count(*)::int as n from iddqueue.messages`
  return row!.n as number
}

/**
 * Proves a refused send wrote nothing and woke nobody: no row, no enqueue
 * middleware, and the first NOTIFY the listener gets is the sentinel's.
 * Notifications arrive in commit order, so one sent for the refused message
 * would have come first.
 */
async function expectNothingWritten(broker: Broker): Promise<void> {
  expect(await messageCount()).toBe(0)
  expect(written).toBe(0)
  expect(broker.namespace.channel('wake')).toBe(WAKE)
  const sentinel = broker.message('sentinel', [], { queue: 'sentinel' })
  await broker.enqueue(sentinel)
  await until(() => wake!.payloads.length > 0, 5_000, 'the sentinel notification')
  expect(wake!.payloads).toEqual(['sentinel'])
  const rows = await db.sql`select queue from iddqueue.messages`
  expect(rows).toEqual([{ queue: 'sentinel' }])
}

/** Awaits a refused promise and returns its error, checking the class across package copies. */
async function refusal(
  promise: Promise<unknown>,
  Class: typeof InvalidPayloadError | typeof PayloadTooLargeError,
): Promise<Error> {
  const error = await promise.then(
    () => {
      throw new Error('expected the send to be refused')
    },
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(Class)
  expect(Class.isInstance(error)).toBe(true)
  return error as Error
}

const INVALID: readonly [string, () => unknown[], string][] = [
  [
    'a BigInt',
    () => [1, { nested: [10n] }],
    'args[1].nested[0] is a BigInt, which does not survive JSON; pass it as a string',
  ],
  ['a function', () => [{ callback: () => 1 }], 'args[0].callback is a function'],
  ['a symbol', () => ['ok', Symbol('s')], 'args[1] is a symbol'],
  ['a cycle', () => [cyclic()], 'args[0].self is a circular reference'],
  [
    'a cycle through an array',
    () => [deepCycle()],
    'args[0].items[0].parent is a circular reference',
  ],
  [
    'a Date',
    () => [{ when: new Date(0) }],
    'args[0].when is a Date, which does not survive JSON; pass date.toISOString() or a timestamp',
  ],
  [
    'a Map',
    () => [new Map([['a', 1]])],
    'args[0] is a Map, which does not survive JSON; pass a plain object',
  ],
  ['a Set', () => [{ tags: new Set(['a']) }], 'args[0].tags is a Set'],
  [
    'a class instance',
    () => [1, new Point(1, 2)],
    'args[1] is a Point, which does not survive JSON; pass a plain object',
  ],
  ['a typed array', () => [new Uint8Array(2)], 'args[0] is a Uint8Array'],
  [
    '\\u0000 in a string',
    () => [{ text: 'a\u0000b' }],
    'args[0].text contains \\u0000, which does not survive JSON; PostgreSQL jsonb refuses it',
  ],
  [
    '\\u0000 in an object key',
    () => [{ outer: { 'a\u0000b': 1 } }],
    'args[0].outer["a\\u0000b"] is a key that contains \\u0000, which does not survive JSON; PostgreSQL jsonb refuses it',
  ],
  [
    'an unpaired surrogate',
    () => [['ok', 'x\ud800y']],
    'args[0][1] contains an unpaired surrogate',
  ],
  [
    'an unpaired surrogate in an object key',
    () => [{ '\udc00': true }],
    'args[0]["\\udc00"] is a key that contains an unpaired surrogate',
  ],
  ['NaN', () => [{ n: Number.NaN }], 'args[0].n is NaN'],
  ['Infinity', () => [[1, 2, Number.POSITIVE_INFINITY]], 'args[0][2] is Infinity'],
  ['-Infinity', () => [Number.NEGATIVE_INFINITY], 'args[0] is -Infinity'],
  ['undefined inside an array', () => [[1, undefined, 3]], 'args[0][1] is undefined'],
  ['a hole in an array', () => [holey()], 'args[0][1] is undefined'],
  ['undefined between arguments', () => [1, undefined, 3], 'args[1] is undefined'],
  [
    'a key that is not an identifier',
    () => [{ 'my key': [10n] }],
    'args[0]["my key"][0] is a BigInt',
  ],
]

describe('payloads refused at send time', () => {
  it.each(INVALID)('refuses %s, naming the path', async (_what, args, text) => {
    const { broker, any } = brokerWithActors()
    const error = await refusal(any.send(...args()), InvalidPayloadError)
    expect(error.message.startsWith(`send to any_args: ${text}`)).toBe(true)
    await expectNothingWritten(broker)
  })

  it('names the same path through sendWithOptions and broker.enqueue', async () => {
    const { broker, any } = brokerWithActors()
    await expect(any.sendWithOptions({ args: [{ big: 1n }], delayMs: 10 })).rejects.toThrow(
      'send to any_args: args[0].big is a BigInt',
    )
    await expect(broker.enqueue(any.message('ok', { deep: [{ fn: Math.max }] }))).rejects.toThrow(
      'send to any_args: args[1].deep[0].fn is a function',
    )
    await expect(
      broker.enqueue(broker.message('undeclared', [new Date()], { queue: 'elsewhere' })),
    ).rejects.toThrow(/^send to undeclared: args\[0\] is a Date.*toISOString/)
    await expectNothingWritten(broker)
  })

  it('checks message-level options the same way', async () => {
    const { broker, any } = brokerWithActors()
    const error = await refusal(
      any.sendWithOptions({ args: [1], options: { plugin: { at: new Date() } } }),
      InvalidPayloadError,
    )
    expect(error.message).toMatch(/^send to any_args: options\.plugin\.at is a Date/)
    await expectNothingWritten(broker)
  })

  it('keeps the codec error as the cause', async () => {
    const { broker, any } = brokerWithActors()
    const error = await refusal(any.send(10n), InvalidPayloadError)
    expect(InvalidPayloadError.isInstance(error.cause)).toBe(true)
    expect((error.cause as Error).message).toMatch(/^args\[0\] is a BigInt/)
    await expectNothingWritten(broker)
  })

  it('runs no SQL for a refused send', async () => {
    const queries: string[] = []
    const sql = postgres(db.url, {
      max: 2,
      onnotice: () => {},
      debug: (_connection, query) => queries.push(query),
    })
    const broker = createBroker({ sql })
    try {
      const any = broker.actor('any_args', (...args: unknown[]) => args.length)
      await expect(any.send({ cycle: cyclic() })).rejects.toThrow(InvalidPayloadError)
      await expect(
        broker.enqueueMany([any.message(1), any.message(Symbol.iterator)]),
      ).rejects.toThrow(InvalidPayloadError)
      await expect(any.send('x'.repeat(DEFAULT_MAX_PAYLOAD_BYTES))).rejects.toThrow(
        PayloadTooLargeError,
      )
      expect(queries).toEqual([])
      // The recorder works: a valid send is seen.
      await any.send(1)
      expect(queries.some((q) => q.includes('insert into'))).toBe(true)
    } finally {
      await broker.close()
      await sql.end()
    }
  })
})

/** `levels` arrays nested in one another around a string. */
function nested(levels: number): unknown {
  let value: unknown = 'leaf'
  for (let i = 0; i < levels; i++) value = [value]
  return value
}

describe('deeply nested payloads', () => {
  it('refuses an argument nested ~5,000 levels with InvalidPayloadError naming the limit', async () => {
    const { broker, any } = brokerWithActors()
    const error = await refusal(any.send(nested(5_000)), InvalidPayloadError)
    expect(error.message).toMatch(
      new RegExp(`nested deeper than ${MAX_PAYLOAD_DEPTH} levels of arrays and objects`),
    )
    await expect(broker.enqueueMany([any.message({ deep: nested(5_000) })])).rejects.toSatisfy(
      (e) => InvalidPayloadError.isInstance(e),
    )
    await expectNothingWritten(broker)
  })

  it('stores and reads back a payload exactly at the limit', async () => {
    const { any } = brokerWithActors()
    // The arguments list is the first level, so its argument may nest one less.
    const deepest = nested(MAX_PAYLOAD_DEPTH - 1)
    const message = await any.send(deepest)
    const [row] = await db.sql`select args from iddqueue.messages where id = ${message.id}`
    expect(row?.args).toEqual([deepest])
    await expect(any.send(nested(MAX_PAYLOAD_DEPTH))).rejects.toSatisfy((e) =>
      InvalidPayloadError.isInstance(e),
    )
  })
})

describe('payloads accepted', () => {
  it('drops trailing undefined arguments (omitted optional parameters)', async () => {
    const { broker } = brokerWithActors()
    const optional = broker.actor(
      'optional',
      (a: number, b?: string, c?: { d?: number }, _ctx?: ActorContext) => [a, b, c],
      { queue: 'payloads' },
    )
    await optional.send(1)
    await optional.send(1, undefined, undefined)
    await optional.send(2, 'two', undefined)
    await optional.send(3, 'three', { d: undefined })
    const rows = await db.sql`select args::text as args from iddqueue.messages order by id`
    expect(rows.map((r) => r.args)).toEqual(['[1]', '[1]', '[2, "two"]', '[3, "three", {}]'])
    // A hole before a given argument is not trailing: refused rather than turned into null.
    await expect(optional.send(4, undefined, { d: 1 })).rejects.toThrow(
      'send to optional: args[1] is undefined',
    )
  })

  it('stores values that survive JSON exactly, shared references included', async () => {
    const { any } = brokerWithActors()
    const shared = { id: 7 }
    const bare = Object.create(null) as Record<string, unknown>
    bare.k = 'v'
    const args = [
      null,
      -0.5,
      Number.MAX_SAFE_INTEGER,
      'émoji 🎉 "quotes" \\ back\nline',
      { nested: { deep: [true, false, null, { x: [] }] }, 'my key': 1, undefinedProp: undefined },
      [shared, shared],
      bare,
    ]
    const sent = await any.send(...args)
    const [row] = await db.sql`select args from iddqueue.messages where id = ${sent.id}`
    expect(row!.args).toEqual([
      null,
      -0.5,
      Number.MAX_SAFE_INTEGER,
      'émoji 🎉 "quotes" \\ back\nline',
      { nested: { deep: [true, false, null, { x: [] }] }, 'my key': 1 },
      [{ id: 7 }, { id: 7 }],
      { k: 'v' },
    ])
  })
})

describe('payload size', () => {
  it('refuses a payload over the default 1 MiB, naming the actor and both sizes', async () => {
    const { broker, any } = brokerWithActors()
    expect(DEFAULT_MAX_PAYLOAD_BYTES).toBe(1024 * 1024)
    // ["…"] is the string plus 4 bytes, and the empty options {} add 2.
    const error = await refusal(any.send('x'.repeat(1024 * 1024)), PayloadTooLargeError)
    expect(error.message).toBe(
      'send to any_args: Message for actor any_args is 1048582 bytes of JSON, over the limit of 1048576 bytes (maxPayloadBytes)',
    )
    await expectNothingWritten(broker)
  })

  it('accepts a payload of exactly 1 MiB', async () => {
    const { any } = brokerWithActors()
    const sent = await any.send('x'.repeat(1024 * 1024 - 6))
    const [row] =
      await db.sql`select octet_length(args::text) as n from iddqueue.messages where id = ${sent.id}`
    expect(row!.n).toBe(1024 * 1024 - 2)
  })

  it('applies a custom maxPayloadBytes at the byte boundary', async () => {
    const { broker, any } = brokerWithActors({ maxPayloadBytes: 2048 })
    const error = await refusal(any.send('x'.repeat(2043)), PayloadTooLargeError)
    expect(error.message).toBe(
      'send to any_args: Message for actor any_args is 2049 bytes of JSON, over the limit of 2048 bytes (maxPayloadBytes)',
    )
    await expectNothingWritten(broker)
    // One byte less is exactly the limit: accepted.
    const sent = await any.send('x'.repeat(2042))
    const [row] =
      await db.sql`select octet_length(args::text) as n from iddqueue.messages where id = ${sent.id}`
    expect(row!.n).toBe(2042 + 4)
  })

  it('counts UTF-8 bytes, not characters', async () => {
    const { broker, any } = brokerWithActors({ maxPayloadBytes: 2048 })
    // 1,100 characters, 2,200 bytes.
    await expect(any.send('é'.repeat(1100))).rejects.toThrow(
      'Message for actor any_args is 2206 bytes of JSON, over the limit of 2048 bytes',
    )
    await expectNothingWritten(broker)
  })

  it('counts message-level options', async () => {
    const { broker, any } = brokerWithActors({ maxPayloadBytes: 2048 })
    await expect(
      any.sendWithOptions({ args: [], options: { blob: 'x'.repeat(2040) } }),
    ).rejects.toThrow(/^send to any_args: Message for actor any_args is 2053 bytes of JSON/)
    await expectNothingWritten(broker)
  })

  it.each([[1023], [1024.5], [Number.NaN], [-1]])(
    'refuses maxPayloadBytes %s when the broker is created',
    (maxPayloadBytes) => {
      expect(() => createBroker({ url: db.url, maxPayloadBytes })).toThrow(InvalidOptionError)
      expect(() => createBroker({ url: db.url, maxPayloadBytes })).toThrow(
        `Invalid maxPayloadBytes ${maxPayloadBytes}: expected an integer of at least 1024`,
      )
    },
  )
})

describe('refusals inside enqueueMany', () => {
  it('names the entry index and the actor, and stores nothing from the batch', async () => {
    const { broker, any } = brokerWithActors()
    const other = broker.actor('other', (n: number) => n, { queue: 'other' })
    const error = await refusal(
      broker.enqueueMany([
        any.message(1),
        { message: other.message(2), delayMs: 100 },
        any.message('ok', { nested: [5n] }),
        other.message(4),
      ]),
      InvalidPayloadError,
    )
    expect(error.message).toBe(
      'batch entry 2 (any_args): args[1].nested[0] is a BigInt, which does not survive JSON; pass it as a string',
    )
    await expectNothingWritten(broker)
  })

  it.each(INVALID)('refuses %s in entry 1 of a batch', async (_what, args, text) => {
    const { broker, any } = brokerWithActors()
    const error = await refusal(
      broker.enqueueMany([any.message('fine'), { message: any.message(...args()), priority: 3 }]),
      InvalidPayloadError,
    )
    expect(error.message.startsWith(`batch entry 1 (any_args): ${text}`)).toBe(true)
    await expectNothingWritten(broker)
  })

  it('names the entry of a payload that is too large', async () => {
    const { broker, any } = brokerWithActors({ maxPayloadBytes: 2048 })
    const entries = [
      any.message('a'),
      any.message('b'),
      any.message('c'),
      { message: any.message('x'.repeat(3000)), dedupKey: 'big', dedupTtlMs: 60_000 },
    ]
    const error = await refusal(broker.enqueueMany(entries), PayloadTooLargeError)
    expect(error.message).toBe(
      'batch entry 3 (any_args): Message for actor any_args is 3006 bytes of JSON, over the limit of 2048 bytes (maxPayloadBytes)',
    )
    const [dedup] = await db.sql`select count(*)::int as n from iddqueue.deduplication`
    expect(dedup!.n).toBe(0)
    await expectNothingWritten(broker)
  })

  it('stores nothing when the bad entry is in a batch with deduplicated entries', async () => {
    const { broker, any } = brokerWithActors()
    await expect(
      broker.enqueueMany([
        { message: any.message(1), dedupKey: 'k1', dedupTtlMs: 60_000 },
        any.message(2),
        { message: any.message(Number.NaN), dedupKey: 'k2', dedupTtlMs: 60_000 },
      ]),
    ).rejects.toThrow('batch entry 2 (any_args): args[0] is NaN')
    const [dedup] = await db.sql`select count(*)::int as n from iddqueue.deduplication`
    expect(dedup!.n).toBe(0)
    await expectNothingWritten(broker)
  })
})
