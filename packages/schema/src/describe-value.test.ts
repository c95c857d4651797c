import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { describeValue } from './describe-value.js'

describe('describeValue', () => {
  it('renders any value without throwing, in at most about 270 characters', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withBigInt: true,
          withDate: true,
          withMap: true,
          withNullPrototype: true,
          withBoxedValues: true,
        }),
        (value) => {
          const text = describeValue(value)
          expect(text.length).toBeLessThanOrEqual(270)
        },
      ),
    )
    expect(describeValue(Object.create(null))).toBe('an object')
    expect(describeValue(Symbol('s'))).toBe('a symbol')
    expect(describeValue('x')).toBe('"x"')
    expect(describeValue(Number.NaN)).toBe('NaN')
    // Passes instanceof Date, yet Date's getTime throws on it.
    expect(describeValue(Object.create(Date.prototype))).toBe('an object')
  })
})
