import { expectTypeOf, it } from 'vitest'
import type { ActorArgs, ActorContext, TransactionalContext } from '../src/index.js'

it('types send() from the handler, without a trailing ActorContext (optional or not)', () => {
  expectTypeOf<ActorArgs<(a: number, b: string, ctx: ActorContext) => void>>().toEqualTypeOf<
    [number, string]
  >()
  expectTypeOf<ActorArgs<(a: number, b?: string, ctx?: ActorContext) => void>>().toEqualTypeOf<
    [number, string?]
  >()
  expectTypeOf<ActorArgs<(a: number, ctx?: ActorContext) => void>>().toEqualTypeOf<[number]>()
  expectTypeOf<ActorArgs<(ctx: ActorContext) => void>>().toEqualTypeOf<[]>()
  expectTypeOf<ActorArgs<() => void>>().toEqualTypeOf<[]>()
  expectTypeOf<ActorArgs<(...items: number[]) => void>>().toEqualTypeOf<number[]>()
  // biome-ignore lint/suspicious/noExplicitAny: checks that a trailing `any` stays an argument
  expectTypeOf<ActorArgs<(a: number, b: any) => void>>().toEqualTypeOf<[number, any]>()
  expectTypeOf<ActorArgs<(a: number, b: unknown) => void>>().toEqualTypeOf<[number, unknown]>()
  expectTypeOf<ActorArgs<(a: number, b: undefined) => void>>().toEqualTypeOf<[number, undefined]>()
  expectTypeOf<ActorArgs<(a: { x: number }) => void>>().toEqualTypeOf<[{ x: number }]>()
})

it('treats a trailing TransactionalContext as the context, whatever its transaction type', () => {
  expectTypeOf<
    ActorArgs<(orderId: string, cents: number, ctx: TransactionalContext) => void>
  >().toEqualTypeOf<[string, number]>()
  expectTypeOf<
    ActorArgs<
      (orderId: string, ctx: TransactionalContext<{ insertInto(table: string): void }>) => void
    >
  >().toEqualTypeOf<[string]>()
})
