import { describe, expect, expectTypeOf, it } from 'vitest'
import type { ActorArgs, ActorContext, ActorOptions, Broker, ContextRule } from '../src/index.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

/** What a handler saw: its arguments, with the context replaced by a marker. */
type Seen = unknown[]
const CTX = '<ctx>'
const show = (values: unknown[]): Seen =>
  values.map((v) => (typeof v === 'object' && v !== null && 'attempt' in v ? CTX : v))

/**
 * `broker.actor()` as a JavaScript caller sees it, without the types: for
 * the shapes the types refuse, to pin down what the runtime does with them.
 */
function untypedActor(
  broker: Broker,
  name: string,
  handler: (...args: never[]) => unknown,
  options: ActorOptions,
): { send(...args: unknown[]): Promise<unknown> } {
  return (broker.actor as unknown as (...args: unknown[]) => ReturnType<typeof untypedActor>)(
    name,
    handler,
    options,
  )
}

/** Runs the sends through a worker and returns what each handler call saw, in send order. */
async function run(
  declare: (broker: ReturnType<typeof db.broker>, queue: string, seen: Seen[]) => Promise<unknown>,
): Promise<Seen[]> {
  const broker = db.broker()
  const queue = uniqueQueue()
  const seen: Seen[] = []
  await declare(broker, queue, seen)
  const worker = broker.worker({ queues: [queue], concurrency: 1 })
  await worker.start()
  await broker.join({ timeoutMs: 20_000 })
  await worker.stop()
  return seen
}

describe('where the context goes, per parameter shape', () => {
  it('required parameters, then the context', async () => {
    expectTypeOf<ActorArgs<(a: number, b: number, ctx: ActorContext) => void>>().toEqualTypeOf<
      [number, number]
    >()
    const seen = await run(async (broker, queue, seen) => {
      const a = broker.actor(
        'req',
        (x: number, y: number, ctx: ActorContext) => {
          seen.push(show([x, y, ctx]))
        },
        { queue },
      )
      await a.send(1, 2)
    })
    expect(seen).toEqual([[1, 2, CTX]])
  })

  it('optional parameters omitted or given, then the context', async () => {
    const seen = await run(async (broker, queue, seen) => {
      const a = broker.actor(
        'opt',
        (x: number, y?: number, ctx?: ActorContext) => {
          seen.push(show([x, y, ctx]))
        },
        { queue },
      )
      await a.send(1)
      await a.send(1, 2)
    })
    expect(seen).toEqual([
      [1, undefined, CTX],
      [1, 2, CTX],
    ])
  })

  it('a parameter with a default value before the context (hidden from handler.length)', async () => {
    const seen = await run(async (broker, queue, seen) => {
      const a = broker.actor(
        'dflt',
        (x: number, y = 10, ctx?: ActorContext) => {
          seen.push(show([x, y, ctx]))
        },
        { queue },
      )
      await a.send(1)
      await a.send(1, 2)
    })
    expect(seen).toEqual([
      [1, 10, CTX],
      [1, 2, CTX],
    ])
  })

  it('a rest parameter gets exactly the arguments, never the context', async () => {
    expectTypeOf<ActorArgs<(a: number, ...rest: number[]) => void>>().toEqualTypeOf<
      [a: number, ...rest: number[]]
    >()
    const seen = await run(async (broker, queue, seen) => {
      const a = broker.actor(
        'rest',
        (x: number, ...rest: number[]) => {
          seen.push([x, ...rest])
        },
        { queue },
      )
      await a.send(1)
      await a.send(1, 2, 3)
    })
    expect(seen).toEqual([[1], [1, 2, 3]])
  })

  it('required parameters and no context: exactly the arguments', async () => {
    const seen = await run(async (broker, queue, seen) => {
      const a = broker.actor(
        'plain',
        (x: number, y: number) => {
          seen.push([x, y])
        },
        { queue },
      )
      await a.send(1, 2)
    })
    expect(seen).toEqual([[1, 2]])
  })

  it('only a context, required or optional', async () => {
    const seen = await run(async (broker, queue, seen) => {
      const a = broker.actor(
        'only',
        (ctx: ActorContext) => {
          seen.push(show([ctx]))
        },
        { queue },
      )
      const b = broker.actor(
        'only_optional',
        (ctx?: ActorContext) => {
          seen.push(show([ctx]))
        },
        { queue },
      )
      await a.send()
      await b.send()
    })
    expect(seen).toEqual([[CTX], [CTX]])
  })
})

describe('the shapes the runtime cannot tell apart, refused by the types of broker.actor()', () => {
  // Compiled, `(a, b?) => …` and `(a, ctx) => …` are the same function: the
  // runtime puts the context in the last declared parameter whenever the
  // message has fewer arguments. TypeScript cannot tell `(a, b = 1)` from
  // `(a, b?: number)` in a generic either. So broker.actor() refuses every
  // handler with an optional or default parameter whose last parameter is not
  // a context (ContextRule), and asks for `_ctx?: ActorContext` last.
  it('ContextRule accepts a context last, refuses an optional or default parameter last', () => {
    expectTypeOf<ContextRule<(a: number, b?: number) => void>>().not.toEqualTypeOf<
      (a: number, b?: number) => void
    >()
    expectTypeOf<ContextRule<(a: number, b?: number, ctx?: ActorContext) => void>>().toEqualTypeOf<
      (a: number, b?: number, ctx?: ActorContext) => void
    >()
    expectTypeOf<ContextRule<(a: number, b: number) => void>>().toEqualTypeOf<
      (a: number, b: number) => void
    >()
    expectTypeOf<ContextRule<(...items: number[]) => void>>().toEqualTypeOf<
      (...items: number[]) => void
    >()
  })

  it('broker.actor() refuses them at compile time', () => {
    // Type checks only: the function is never called.
    const declare = (broker: Broker) => {
      // @ts-expect-error an optional parameter last: an omitted one would receive the context
      broker.actor('optional_last', (a: number, b?: number) => a + (b ?? 0))
      // @ts-expect-error a default value last: optional to TypeScript as well
      broker.actor('default_last', (a: number, by = 1) => a * by)
      broker.actor(
        'optional_then_ctx',
        (a: number, b?: number, _ctx?: ActorContext) => a + (b ?? 0),
      )
      broker.actor('default_then_ctx', (a: number, by = 1, _ctx?: ActorContext) => a * by)
    }
    expect(typeof declare).toBe('function')
  })

  it('untyped, an omitted optional argument receives the context (what the type prevents)', async () => {
    const seen = await run(async (broker, queue, seen) => {
      const a = untypedActor(
        broker,
        'optional_last',
        (x: number, y?: number) => {
          seen.push(show([x, y]))
        },
        { queue },
      )
      await a.send(1)
      await a.send(1, 2)
    })
    expect(seen).toEqual([
      [1, CTX],
      [1, 2],
    ])
  })

  it('untyped, a last parameter with a default value keeps it: the context never goes there', async () => {
    const seen = await run(async (broker, queue, seen) => {
      const a = untypedActor(
        broker,
        'by',
        (x: number, by = 1) => {
          seen.push([x, by])
        },
        { queue },
      )
      await a.send(3)
      await a.send(3, 2)
    })
    expect(seen).toEqual([
      [3, 1],
      [3, 2],
    ])
  })
})
