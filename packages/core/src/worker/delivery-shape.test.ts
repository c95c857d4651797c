import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Delivery } from './delivery.js'
import { deliveryProblem } from './delivery-shape.js'

const row = (fields: Partial<Record<keyof Delivery, unknown>>): Delivery =>
  ({
    id: '0190c7b0-0000-7000-8000-000000000000',
    queue: 'q',
    actor: 'a',
    args: [],
    options: {},
    priority: 0,
    retries: 0,
    eta_ms: 0,
    age_ms: 0,
    ...fields,
  }) as Delivery

describe('deliveryProblem (the claimed-row decoder)', () => {
  it('never throws on any JSON a row may hold, and accepts exactly arrays of args with object options', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), fc.integer(), (args, options, retries) => {
        const problem = deliveryProblem(row({ args, options, retries }))
        const wellFormed =
          Array.isArray(args) &&
          typeof options === 'object' &&
          options !== null &&
          !Array.isArray(options) &&
          retries >= 0 &&
          !('pipeline' in options)
        if (wellFormed) expect(problem).toBeUndefined()
        if (!Array.isArray(args) || retries < 0) expect(problem).toBeTypeOf('string')
      }),
      { numRuns: 2_000 },
    )
  })

  it('checks any pipeline state without throwing', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (pipeline) => {
        const problem = deliveryProblem(row({ options: { pipeline } }))
        expect(problem === undefined || typeof problem === 'string').toBe(true)
      }),
      { numRuns: 2_000 },
    )
    expect(
      deliveryProblem(
        row({
          options: {
            pipeline: {
              id: 'p',
              steps: [{ id: 's', actor: 'b', queue: 'q', args: [1], options: {}, priority: 0 }],
            },
          },
        }),
      ),
    ).toBeUndefined()
  })
})
