import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { MAX_PREFETCH, PREFETCH_PER_QUEUE, Prefetch } from './prefetch.js'

describe('Prefetch', () => {
  beforeEach(() => {
    // The injected clock: performance.now() moves only when the test says so.
    vi.useFakeTimers({ toFake: ['performance'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('uses a fixed number as given', () => {
    const prefetch = new Prefetch(7, 16)
    for (let i = 0; i < 100; i++) prefetch.completed()
    vi.advanceTimersByTime(1_000)
    expect(prefetch.target()).toBe(7)
  })

  it('starts at the concurrency until a rate is known', () => {
    const prefetch = new Prefetch('auto', 16)
    expect(prefetch.target()).toBe(16)
    prefetch.completed()
    vi.advanceTimersByTime(10) // shorter than the 50 ms sample
    expect(prefetch.target()).toBe(16)
  })

  it('sizes the buffer to about 250 ms of work at the measured rate', () => {
    const prefetch = new Prefetch('auto', 16)
    for (let i = 0; i < 100; i++) prefetch.completed()
    vi.advanceTimersByTime(100) // 1 message per ms
    expect(prefetch.target()).toBe(250)
  })

  it('stays between 1 and MAX_PREFETCH', () => {
    const slow = new Prefetch('auto', 16)
    slow.completed()
    vi.advanceTimersByTime(10_000)
    expect(slow.target()).toBe(1)
    const fast = new Prefetch('auto', 16)
    for (let i = 0; i < 100_000; i++) fast.completed()
    vi.advanceTimersByTime(50)
    expect(fast.target()).toBe(MAX_PREFETCH)
  })

  it('may hold PREFETCH_PER_QUEUE per queue for a worker of more than 100 queues', () => {
    const prefetch = new Prefetch('auto', 16)
    prefetch.forQueues(100)
    for (let i = 0; i < 100_000; i++) prefetch.completed()
    vi.advanceTimersByTime(50)
    expect(prefetch.target()).toBe(MAX_PREFETCH)
    prefetch.forQueues(200)
    for (let i = 0; i < 100_000; i++) prefetch.completed()
    vi.advanceTimersByTime(50)
    expect(prefetch.target()).toBe(200 * PREFETCH_PER_QUEUE)
    const fixed = new Prefetch(7, 16)
    fixed.forQueues(500)
    expect(fixed.target()).toBe(7)
  })

  it('keeps the last target while nothing completes', () => {
    const prefetch = new Prefetch('auto', 4)
    for (let i = 0; i < 20; i++) prefetch.completed()
    vi.advanceTimersByTime(100)
    const target = prefetch.target()
    vi.advanceTimersByTime(10_000)
    expect(prefetch.target()).toBe(target)
  })
})
