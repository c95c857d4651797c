import { describe, expect, it } from 'vitest'
import { MAX_RECONNECT_DELAY_MS, reconnectDelaySeconds } from './reconnect-policy.js'

describe('reconnectDelaySeconds', () => {
  it('starts at 25 ms, doubles, and never exceeds 250 ms however many attempts failed', () => {
    const full = () => 1
    expect(reconnectDelaySeconds(0, full)).toBe(0.025)
    expect(reconnectDelaySeconds(1, full)).toBe(0.025)
    expect(reconnectDelaySeconds(2, full)).toBe(0.05)
    expect(reconnectDelaySeconds(5, full)).toBe(0.25)
    for (const retries of [10, 100, 10_000]) {
      expect(reconnectDelaySeconds(retries, full)).toBe(MAX_RECONNECT_DELAY_MS / 1_000)
    }
  })

  it('jitters between half and all of the delay', () => {
    expect(reconnectDelaySeconds(50, () => 0)).toBe(0.125)
    expect(reconnectDelaySeconds(50, () => 0.5)).toBeCloseTo(0.1875)
  })
})
