import { describe, expect, it } from 'vitest'
import { RestartPolicy } from '../src/supervisor/restart-policy.js'

const options = {
  maxRestarts: 3,
  windowMs: 10_000,
  initialDelayMs: 100,
  maxDelayMs: 350,
  stableAfterMs: 5_000,
}

describe('RestartPolicy', () => {
  it('doubles the delay of a child crashing in a row, up to the cap, and resets it after a stable run', () => {
    const policy = new RestartPolicy({ ...options, maxRestarts: 100 })
    const delays = [0, 1, 2, 3].map((i) => policy.crashed(0, i, i + 1))
    expect(delays).toEqual([
      { action: 'restart', delayMs: 100 },
      { action: 'restart', delayMs: 200 },
      { action: 'restart', delayMs: 350 },
      { action: 'restart', delayMs: 350 },
    ])
    expect(policy.crashed(1, 0, 1)).toEqual({ action: 'restart', delayMs: 100 }) // its own backoff
    expect(policy.crashed(0, 10, 10 + 5_000)).toEqual({ action: 'restart', delayMs: 100 })
  })

  it('gives up once more than maxRestarts crashes fall within the window', () => {
    const policy = new RestartPolicy(options)
    for (const now of [0, 1_000, 2_000]) expect(policy.crashed(0, now, now).action).toBe('restart')
    expect(policy.crashed(1, 0, 3_000)).toEqual({ action: 'give-up', crashes: 4, windowMs: 10_000 })
  })

  it('forgets crashes older than the window', () => {
    const policy = new RestartPolicy(options)
    for (const now of [0, 1_000, 2_000]) policy.crashed(0, now, now)
    expect(policy.crashed(0, 10_500, 10_500).action).toBe('restart')
  })
})
