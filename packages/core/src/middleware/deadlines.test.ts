import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ProcessEvent } from '../plugin/middleware-interface.js'
import { Deadlines } from './deadlines.js'

const event = (id: string) => ({ message: { id } }) as unknown as ProcessEvent

function pending<T>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

describe('Deadlines', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('calls onExpired once for an attempt past its limit, and never for one that settled', async () => {
    const expired: string[] = []
    const deadlines = new Deadlines((e) => expired.push(e.message.id))
    const slow = pending<string>()
    const fast = pending<string>()
    void deadlines.watch(event('slow'), 100, () => slow.promise)
    const done = deadlines.watch(event('fast'), 100, () => fast.promise)
    fast.resolve('ok')
    await expect(done).resolves.toBe('ok')
    await vi.advanceTimersByTimeAsync(99)
    expect(expired).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(expired).toEqual(['slow'])
    await vi.advanceTimersByTimeAsync(1_000)
    expect(expired).toEqual(['slow'])
    slow.resolve('late')
  })

  it('watches many attempts with one timer, earliest first', async () => {
    const expired: string[] = []
    const deadlines = new Deadlines((e) => expired.push(e.message.id))
    const never = () => new Promise<never>(() => {})
    void deadlines.watch(event('c'), 300, never)
    void deadlines.watch(event('a'), 100, never)
    void deadlines.watch(event('b'), 200, never)
    expect(vi.getTimerCount()).toBe(1)
    await vi.advanceTimersByTimeAsync(100)
    expect(expired).toEqual(['a'])
    await vi.advanceTimersByTimeAsync(200)
    expect(expired).toEqual(['a', 'b', 'c'])
  })

  it('disarms its timer once nothing is watched, and reuses freed slots', async () => {
    const deadlines = new Deadlines(() => {})
    const first = pending<void>()
    void deadlines.watch(event('x'), 1_000, () => first.promise)
    expect(vi.getTimerCount()).toBe(1)
    first.resolve()
    await vi.advanceTimersByTimeAsync(0)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('frees the slot when next throws synchronously', () => {
    const deadlines = new Deadlines(() => {})
    expect(() =>
      deadlines.watch(event('t'), 100, () => {
        throw new Error('sync')
      }),
    ).toThrow('sync')
    expect(vi.getTimerCount()).toBe(0)
  })
})
