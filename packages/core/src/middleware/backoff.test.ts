import { describe, expect, it } from 'vitest'
import { computeBackoff } from './backoff.js'

const options = { minBackoffMs: 1_000, maxBackoffMs: 60_000 }
/** The largest value Math.random() can return. */
const almostOne = 1 - Number.EPSILON / 2

describe('computeBackoff', () => {
  it('is half the ceiling with random 0 and the whole ceiling as random approaches 1', () => {
    expect(computeBackoff(1, options, () => 0)).toBe(500)
    expect(computeBackoff(1, options, () => almostOne)).toBe(1_000)
    expect(computeBackoff(3, options, () => 0)).toBe(2_000)
    expect(computeBackoff(3, options, () => almostOne)).toBe(4_000)
    expect(computeBackoff(3, options, () => 0.5)).toBe(3_000)
  })

  it('doubles the ceiling with each retry and caps it at maxBackoffMs', () => {
    const ceilings = Array.from({ length: 9 }, (_, i) =>
      computeBackoff(i + 1, options, () => almostOne),
    )
    expect(ceilings).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000])
    const floors = Array.from({ length: 9 }, (_, i) => computeBackoff(i + 1, options, () => 0))
    expect(floors).toEqual([500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000])
  })

  it('stays finite and capped for huge retry counts, and treats retry 0 or less as the first', () => {
    expect(computeBackoff(10_000, options, () => almostOne)).toBe(60_000)
    expect(
      computeBackoff(1_000_000, { minBackoffMs: 1, maxBackoffMs: 7 * 86_400_000 }, () => 0),
    ).toBe(3.5 * 86_400_000)
    expect(computeBackoff(0, options, () => 0)).toBe(500)
    expect(computeBackoff(-3, options, () => almostOne)).toBe(1_000)
  })

  it('is 0 with a zero minimum backoff, and exactly the cap when min equals max', () => {
    expect(computeBackoff(5, { minBackoffMs: 0, maxBackoffMs: 1_000 }, () => almostOne)).toBe(0)
    expect(computeBackoff(1, { minBackoffMs: 400, maxBackoffMs: 400 }, () => 0)).toBe(200)
    expect(computeBackoff(4, { minBackoffMs: 400, maxBackoffMs: 400 }, () => almostOne)).toBe(400)
  })

  it('with Math.random, spreads over [ceiling/2, ceiling] and never leaves it', () => {
    for (const retry of [1, 4, 7, 20]) {
      const ceiling = Math.min(1_000 * 2 ** (retry - 1), 60_000)
      const samples = Array.from({ length: 4_000 }, () => computeBackoff(retry, options))
      const low = Math.min(...samples)
      const high = Math.max(...samples)
      expect(low).toBeGreaterThanOrEqual(ceiling / 2)
      expect(high).toBeLessThanOrEqual(ceiling)
      // 4,000 uniform samples reach within 1% of both ends (a miss has odds of about e^-40).
      expect(low).toBeLessThan(ceiling / 2 + ceiling / 100)
      expect(high).toBeGreaterThan(ceiling - ceiling / 100)
      expect(samples.every(Number.isInteger)).toBe(true)
      // Both halves of the range are used: jitter, not a constant.
      const middle = (ceiling * 3) / 4
      const below = samples.filter((s) => s < middle).length
      expect(below).toBeGreaterThan(1_600)
      expect(below).toBeLessThan(2_400)
    }
  })
})
