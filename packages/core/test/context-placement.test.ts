import { describe, expect, expectTypeOf, it } from 'vitest'
import type { ActorArgs, ActorContext, ContextRule } from '../src/index.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

/** What a handler saw: its arguments, with the context replaced by a marker. */
type Seen = unknown[]
const CTX = '<ctx>'
const show = (values: unknown[]): Seen =>
  values.map((v) => (typeof v === 'object' && v !== null && 'attempt' in v ? CTX : v))

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

  it('ContextRule flags a handler with optional parameters and no context', () => {
    // The runtime could not tell `b` from a context: an omitted `b` would receive it.
    expectTypeOf<ContextRule<(a: number, b?: number) => void>>().not.toEqualTypeOf<
      (a: number, b?: number) => void
    >()
    expectTypeOf<ContextRule<(a: number, b?: number, ctx?: ActorContext) => void>>().toEqualTypeOf<
      (a: number, b?: number, ctx?: ActorContext) => void
    >()
    expectTypeOf<ContextRule<(a: number, b: number) => void>>().toEqualTypeOf<
      (a: number, b: number) => void
    >()
  })
})

describe('a last parameter with a default value', () => {
  it('keeps its default: the context is never put there', async () => {
    const seen = await run(async (broker, queue, seen) => {
      const a = broker.actor(
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
