import { beforeEach, describe, expect, expectTypeOf, it } from 'vitest'
import {
  ACTOR_DEFAULTS,
  type ActorContext,
  type ActorOptions,
  type Handler,
  type IddqueuePlugin,
  InvalidIdentifierError,
  InvalidOptionError,
  InvalidStateError,
  type Message,
} from '../src/index.js'
import { setupDatabase } from './helpers.js'

const db = setupDatabase()

beforeEach(async () => {
  await db.sql`truncate iddqueue.messages, iddqueue.deduplication`
})

/** Runs `fn` and returns what it threw, failing when it did not throw. */
function thrown(fn: () => unknown): Error {
  try {
    fn()
  } catch (error) {
    if (error instanceof Error) return error
    throw new Error(`threw a non-Error: ${String(error)}`)
  }
  throw new Error('expected the call to throw')
}

async function rowCount(): Promise<number> {
  const [row] = await db.sql`select count(*)::int as n from iddqueue.messages`
  return row!.n as number
}

describe('declaring an actor', () => {
  it('stores its options with defaults filled in, and its messages go to its queue', async () => {
    const broker = db.broker()
    const add = broker.actor('add', (a: number, b: number) => a + b, {
      queue: 'math',
      priority: 5,
      maxRetries: 3,
    })
    expect(add.name).toBe('add')
    expect(add.queue).toBe('math')
    expect(add.options).toMatchObject({
      ...ACTOR_DEFAULTS,
      queue: 'math',
      priority: 5,
      maxRetries: 3,
      throws: [],
    })
    expect(Object.isFrozen(add.options)).toBe(true)

    const sent = await add.send(1, 2)
    const rows = await db.sql`select queue, actor, priority, args from iddqueue.messages`
    expect(rows).toEqual([{ queue: 'math', actor: 'add', priority: 5, args: [1, 2] }])
    expect(sent.queue).toBe('math')
  })

  it('defaults to the queue "default" and priority 0', () => {
    const broker = db.broker()
    const noop = broker.actor('noop', () => undefined)
    expect(noop.queue).toBe('default')
    expect(noop.options.priority).toBe(0)
    expect(noop.options.maxRetries).toBe(20)
  })

  it('refuses an unknown option, naming the key and the actor', () => {
    const broker = db.broker()
    const options = { queue: 'q', retries: 3 } as ActorOptions
    const error = thrown(() => broker.actor('unknown_option', () => 1, options))
    expect(InvalidOptionError.isInstance(error)).toBe(true)
    expect(error).toBeInstanceOf(InvalidOptionError)
    expect(error.message).toMatch(/^Unknown option "retries" for actor unknown_option: /)
    expect(error.message).toContain('maxRetries')
  })

  it('accepts a key owned by a plugin and keeps it in the options', () => {
    const audit: IddqueuePlugin = { name: 'audit', actorOptions: ['audit'] }
    const broker = db.broker({ plugins: [audit] })
    const options = { queue: 'audited', audit: { level: 2 } }
    const actor = broker.actor('audited', () => 1, options)
    expect(actor.options.audit).toEqual({ level: 2 })
    expect(actor.options.queue).toBe('audited')

    // The same key without the plugin is refused, and the error says where it may come from.
    const plain = db.broker()
    expect(() => plain.actor('audited', () => 1, options)).toThrow(
      /Unknown option "audit" for actor audited: .*a plugin may own it/,
    )
  })

  it('lists plugin keys among the expected ones when refusing an unknown key', () => {
    const broker = db.broker({ plugins: [{ name: 'audit', actorOptions: ['audit'] }] })
    const options = { queue: 'q', auditt: true } as ActorOptions
    expect(() => broker.actor('typo', () => 1, options)).toThrow(
      /Unknown option "auditt" for actor typo: expected one of .*notifyShutdown, transactional, audit /,
    )
  })

  it.each([
    [
      'maxRetries',
      -1,
      /Invalid maxRetries -1 \(for actor bad\): expected an integer from 0 to 1000000/,
    ],
    ['maxRetries', 1.5, /Invalid maxRetries 1\.5 \(for actor bad\): expected/],
    ['timeLimitMs', 1.5, /Invalid timeLimitMs 1\.5 \(for actor bad\): expected/],
    [
      'timeLimitMs',
      0,
      /Invalid timeLimitMs 0 \(for actor bad\): expected an integer of at least 1$/,
    ],
    ['timeLimitMs', '1000', /Invalid timeLimitMs "1000" \(for actor bad\): expected/],
    ['minBackoffMs', -5, /Invalid minBackoffMs -5 \(for actor bad\): expected/],
    ['maxAgeMs', Number.NaN, /Invalid maxAgeMs NaN \(for actor bad\): expected/],
    ['priority', 2 ** 31, /Invalid priority 2147483648 \(for actor bad\): expected/],
    ['retryWhen', 3, /Invalid option retryWhen for actor bad: expected a function/],
    [
      'throws',
      [Error, 'TypeError'],
      /Invalid option throws for actor bad: expected an array of error classes/,
    ],
    ['notifyShutdown', 'yes', /Invalid option notifyShutdown for actor bad: expected a boolean/],
    ['onSuccess', 42, /Invalid option onSuccess for actor bad: expected an actor or an actor name/],
  ])('refuses %s = %s with InvalidOptionError naming it', (key, value, message) => {
    const broker = db.broker()
    const options = { queue: 'q', [key]: value } as ActorOptions
    const error = thrown(() => broker.actor('bad', () => 1, options))
    expect(InvalidOptionError.isInstance(error)).toBe(true)
    expect(error.message).toMatch(message)
  })

  it('refuses minBackoffMs larger than maxBackoffMs, naming both', () => {
    const broker = db.broker()
    expect(() =>
      broker.actor('backoff', () => 1, { minBackoffMs: 10_000, maxBackoffMs: 1_000 }),
    ).toThrow(
      'Invalid options for actor backoff: minBackoffMs (10000) is larger than maxBackoffMs (1000)',
    )
    // Against the default maxBackoffMs (7 days) too.
    const week = ACTOR_DEFAULTS.maxBackoffMs
    const error = thrown(() => broker.actor('backoff', () => 1, { minBackoffMs: week + 1 }))
    expect(InvalidOptionError.isInstance(error)).toBe(true)
    expect(error.message).toContain(
      `minBackoffMs (${week + 1}) is larger than maxBackoffMs (${week})`,
    )
  })

  it.each([
    ['a b', '"a b"'],
    ['', '""'],
    ['x'.repeat(200), `"${'x'.repeat(200)}"`],
    ['-leading', '"-leading"'],
    ['émoji', '"émoji"'],
    ['semi;colon', '"semi;colon"'],
  ])('refuses the queue name %j with InvalidIdentifierError', (queue, quoted) => {
    const broker = db.broker()
    const error = thrown(() => broker.actor('queued', () => 1, { queue }))
    expect(InvalidIdentifierError.isInstance(error)).toBe(true)
    expect(InvalidOptionError.isInstance(error)).toBe(false)
    expect(error.message).toContain(`Invalid queue name ${quoted}: expected 1 to 128 ASCII`)
  })

  it('accepts a queue name of exactly 128 characters with punctuation', async () => {
    const broker = db.broker()
    const queue = `q_1.a:b-${'x'.repeat(120)}`
    expect(queue).toHaveLength(128)
    const actor = broker.actor('long_queue', () => 1, { queue })
    await actor.send()
    const rows = await db.sql`select queue from iddqueue.messages`
    expect(rows).toEqual([{ queue }])
  })

  it.each([['a b'], [''], ['x'.repeat(129)], ['drop table;']])(
    'refuses the actor name %j with InvalidIdentifierError',
    (name) => {
      const broker = db.broker()
      const error = thrown(() => broker.actor(name, () => 1))
      expect(InvalidIdentifierError.isInstance(error)).toBe(true)
      expect(error.message).toContain(`Invalid actor name ${JSON.stringify(name)}`)
    },
  )

  it('refuses a second actor with the same name, and keeps the first', async () => {
    const broker = db.broker()
    const first = broker.actor('twice', (n: number) => n, { queue: 'first' })
    const error = thrown(() => broker.actor('twice', (n: number) => n * 2, { queue: 'second' }))
    expect(InvalidStateError.isInstance(error)).toBe(true)
    expect(error.message).toBe('Actor twice is already declared on this broker')
    await first.send(1)
    // broker.message() for the name still resolves to the first declaration's queue.
    expect(broker.message('twice', [2]).queue).toBe('first')
    expect(await rowCount()).toBe(1)
  })

  it('lets two brokers declare the same actor name', () => {
    const one = db.broker()
    const two = db.broker()
    one.actor('shared', () => 1)
    expect(() => two.actor('shared', () => 2)).not.toThrow()
  })

  it('does not register an actor whose options were refused', () => {
    const broker = db.broker()
    expect(() => broker.actor('retry_me', () => 1, { maxRetries: -1 })).toThrow(InvalidOptionError)
    expect(() => broker.actor('retry_me', () => 1, { maxRetries: 1 })).not.toThrow()
  })

  it.each([
    [42, 'a number'],
    ['handler', 'a string'],
    [null, 'null'],
    [{ call: () => 1 }, 'an object'],
  ])('refuses a handler that is not a function (%s: %s)', (handler, _kind) => {
    const broker = db.broker()
    const error = thrown(() => broker.actor('not_fn', handler as unknown as Handler))
    expect(InvalidOptionError.isInstance(error)).toBe(true)
    expect(error.message).toBe('Invalid handler for actor not_fn: expected a function')
    // Nothing was registered under that name.
    expect(() => broker.actor('not_fn', () => 1)).not.toThrow()
  })

  it('refuses options that are not an object', () => {
    const broker = db.broker()
    expect(() => broker.actor('opts', () => 1, null as unknown as ActorOptions)).toThrow(
      'Invalid options for actor opts: expected an object',
    )
  })
})

describe('actor types', () => {
  it('types send() by the handler parameters without a trailing ActorContext', () => {
    const broker = db.broker()
    const withContext = broker.actor(
      'typed_ctx',
      async (to: string, count: number, ctx: ActorContext) => `${to}:${count}:${ctx.attempt}`,
    )
    expectTypeOf(withContext.send).parameters.toEqualTypeOf<[to: string, count: number]>()
    expectTypeOf(withContext.message).parameters.toEqualTypeOf<[to: string, count: number]>()
    expectTypeOf(withContext.sendWithOptions)
      .parameter(0)
      .toHaveProperty('args')
      .toEqualTypeOf<[to: string, count: number]>()

    // A context typed with the arguments is recognised too.
    const typedContext = broker.actor(
      'typed_ctx_args',
      (id: number, ctx: ActorContext<[number]>) => ctx.message.args[0] === id,
    )
    expectTypeOf(typedContext.send).parameters.toEqualTypeOf<[id: number]>()

    // Only a context: send() takes nothing.
    const onlyContext = broker.actor('typed_only_ctx', (ctx: ActorContext) => ctx.attempt)
    expectTypeOf(onlyContext.send).parameters.toEqualTypeOf<[]>()
  })

  it('keeps every parameter of a handler without a context', () => {
    const broker = db.broker()
    const plain = broker.actor(
      'typed_plain',
      (a: number, b: { nested: string[] }, c: boolean) => a + b.nested.length + Number(c),
    )
    expectTypeOf(plain.send).parameters.toEqualTypeOf<
      [a: number, b: { nested: string[] }, c: boolean]
    >()
    const none = broker.actor('typed_none', () => 'x')
    expectTypeOf(none.send).parameters.toEqualTypeOf<[]>()
    const loose = broker.actor('typed_unknown', (payload: unknown) => payload)
    expectTypeOf(loose.send).parameters.toEqualTypeOf<[payload: unknown]>()
    // `any` matches every type, ActorContext included: it must still count as an argument.
    // biome-ignore lint/suspicious/noExplicitAny: the point of the test is a handler typed with any
    const untyped = broker.actor('typed_any', (payload: any) => payload)
    expectTypeOf(untyped.send).parameters.toHaveProperty('length').toEqualTypeOf<1>()
  })

  it('types message.result() by the awaited handler result', () => {
    const broker = db.broker()
    const sync = broker.actor('typed_sync', (a: number, b: number) => a + b)
    const async = broker.actor('typed_async', async (name: string, _ctx: ActorContext) => ({
      greeting: `hi ${name}`,
    }))
    const nothing = broker.actor('typed_void', async () => {})

    expectTypeOf(sync.message(1, 2).result).returns.toEqualTypeOf<Promise<number>>()
    expectTypeOf(async.message('ada').result).returns.toEqualTypeOf<Promise<{ greeting: string }>>()
    expectTypeOf(nothing.message().result).returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf(sync.send).returns.toEqualTypeOf<
      Promise<Message<[a: number, b: number], number>>
    >()
    expectTypeOf(async.send).returns.resolves.toHaveProperty('args').toEqualTypeOf<[name: string]>()
  })

  it('rejects wrongly typed sends at compile time', () => {
    const broker = db.broker()
    const add = broker.actor('typed_wrong', (a: number, b: number, _ctx: ActorContext) => a + b)
    // Never called: only the compiler looks at these lines, so no SQL runs.
    const neverCalled = async () => {
      // @ts-expect-error a string where a number is expected
      await add.send('1', 2)
      // @ts-expect-error a missing argument
      await add.send(1)
      // @ts-expect-error the context is not an argument of send()
      await add.send(1, 2, {} as ActorContext)
      // @ts-expect-error wrong args in sendWithOptions
      await add.sendWithOptions({ args: [1, '2'] })
      // @ts-expect-error the result is a number, not a string
      const text: string = await add.message(1, 2).result()
      return text
    }
    expect(typeof neverCalled).toBe('function')
  })
})
