import { describe, expect, it } from 'vitest'
import { handlerParameters } from './handler-parameters.js'

type AnyHandler = (...args: never[]) => unknown

describe('handlerParameters', () => {
  it.each<[string, AnyHandler, number, boolean, boolean?]>([
    ['no parameter', () => 1, 0, false],
    ['required', (a: number, b: number) => a + b, 2, false],
    ['optional', (a: number, b?: number) => a + (b ?? 0), 2, false],
    ['a default before the context', (a: number, b = 1, _ctx?: unknown) => a + b, 3, false],
    [
      'a default holding commas and brackets',
      (a = [1, 2], b = { c: (d: number, e: number) => d + e }, _f?: unknown) => [a, b],
      3,
      false,
    ],
    ['a default holding a string with a comma', (a = 'x, y', _b?: unknown) => a, 2, false],
    [
      'destructured parameters',
      ({ a, b }: { a: number; b: number }, [c]: number[]) => a + b + (c ?? 0),
      2,
      false,
    ],
    ['rest', (...items: number[]) => items.length, 1, true],
    ['required then rest', (a: number, ...items: number[]) => a + items.length, 2, true],
    ['a bare arrow parameter', ((a: number) => a) as AnyHandler, 1, false],
    // biome-ignore lint/complexity/useArrowFunction: the function form is what is under test
    ['a function expression', ((a: number, b = 2) => a + b) as AnyHandler, 2, false, true],
    ['an async arrow', async (a: number, b = 1) => a + b, 2, false, true],
    ['a default inside a destructured parameter', ({ a = 1 }: { a?: number }) => a, 1, false],
  ])('counts %s', (_shape, handler, count, rest, lastHasDefault = false) => {
    expect(handlerParameters(handler)).toEqual({ count, rest, lastHasDefault })
  })

  it('falls back to length for a bound function', () => {
    const bound = ((a: number, b: number) => a + b).bind(null) as AnyHandler
    expect(handlerParameters(bound).count).toBe(2)
  })

  it('reads a method', () => {
    const object = {
      run(a: number, b = 1, _ctx?: unknown) {
        return a + b
      },
    }
    expect(handlerParameters(object.run as AnyHandler)).toEqual({
      count: 3,
      rest: false,
      lastHasDefault: false,
    })
  })
})
