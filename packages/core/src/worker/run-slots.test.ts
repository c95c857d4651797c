import { describe, expect, it } from 'vitest'
import type { Run } from './run.js'
import { RunSlots } from './run-slots.js'

const run = (id: string) => ({ slot: -1, message: { id } }) as unknown as Run

describe('RunSlots', () => {
  it('holds at most its capacity and refuses one more', () => {
    const slots = new RunSlots(2)
    slots.add(run('a'))
    slots.add(run('b'))
    expect(slots.size).toBe(2)
    expect(() => slots.add(run('c'))).toThrow('no free slot')
  })

  it('finds, removes and reuses slots in place', () => {
    const slots = new RunSlots(3)
    const [a, b, c] = [run('a'), run('b'), run('c')]
    for (const r of [a, b, c]) slots.add(r)
    expect(slots.find('b')).toBe(b)
    slots.remove(b)
    expect(b.slot).toBe(-1)
    expect(slots.find('b')).toBeUndefined()
    expect(slots.size).toBe(2)
    const d = run('d')
    slots.add(d)
    expect(d.slot).toBeGreaterThanOrEqual(0)
    expect(
      slots
        .values()
        .map((r) => r.message.id)
        .sort(),
    ).toEqual(['a', 'c', 'd'])
  })

  it('ignores removing a run twice or one it does not hold', () => {
    const slots = new RunSlots(2)
    const a = run('a')
    slots.add(a)
    slots.remove(a)
    slots.remove(a)
    slots.remove(run('stranger'))
    expect(slots.size).toBe(0)
    slots.add(run('x'))
    slots.add(run('y'))
    expect(slots.size).toBe(2)
  })
})
