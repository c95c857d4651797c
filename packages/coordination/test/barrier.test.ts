import { InvalidOptionError } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { BarrierNotFound, coordination } from '../src/index.js'
import { rejection, runChild, setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

async function ready() {
  const coord = coordination({ purgeIntervalMs: false })
  await db.broker({ plugins: [coord] }).ready()
  return coord
}

describe('barrier', () => {
  it('10 parties across 3 processes: nobody passes before the last has arrived', async () => {
    const key = uniqueQueue('barrier')
    const children = [
      ['a', '4'],
      ['b', '3'],
      ['c', '3'],
    ].map(
      ([label, arrivals]) =>
        runChild<{ results: boolean[] }>('barrier-party.mjs', [
          db.url,
          key,
          '10',
          arrivals!,
          label!,
        ]).done,
    )
    const results = (await Promise.all(children)).flat().flatMap((m) => m.results)
    expect(results).toEqual(Array(10).fill(true))
    const events = await db.sql`select kind, seq from public.events order by seq`
    const arrivals = events.filter((e) => e.kind === 'arrive')
    const passes = events.filter((e) => e.kind === 'pass')
    expect(arrivals).toHaveLength(10)
    expect(passes).toHaveLength(10)
    const lastArrival = Math.max(...arrivals.map((e) => Number(e.seq)))
    for (const pass of passes) expect(Number(pass.seq)).toBeGreaterThan(lastArrival)
    const [row] =
      await db.sql`select arrived, parties from iddqueue.coordination_barriers where key = ${key}`
    expect(row).toMatchObject({ arrived: 10, parties: 10 })
  }, 120_000)

  it('create once, wait times out while parties are missing, arrive opens it for a late waiter', async () => {
    const coord = await ready()
    const barrier = coord.barrier(uniqueQueue('b'), { parties: 2, ttlMs: 60_000 })
    expect(await barrier.create()).toBe(true)
    expect(await barrier.create()).toBe(false)
    expect(await barrier.arrive()).toBe(1)
    expect(await barrier.wait({ timeoutMs: 100 })).toBe(false)
    const waiting = barrier.wait({ timeoutMs: 60_000 })
    expect(await barrier.arrive()).toBe(2)
    expect(await waiting).toBe(true)
    // State survives the notification: a waiter that comes later passes at once.
    expect(await barrier.wait({ timeoutMs: 0 })).toBe(true)
  })

  it('a missing or expired barrier raises BarrierNotFound; bad options are typed errors', async () => {
    const coord = await ready()
    const missing = coord.barrier(uniqueQueue('b'), { parties: 2, ttlMs: 60_000 })
    expect(BarrierNotFound.isInstance(await rejection(missing.arrive()))).toBe(true)
    expect(BarrierNotFound.isInstance(await rejection(missing.wait({ timeoutMs: 10 })))).toBe(true)
    const key = uniqueQueue('b')
    const short = coord.barrier(key, { parties: 2, ttlMs: 60_000 })
    await short.create()
    await db.sql`update iddqueue.coordination_barriers set expires_at = now() - interval '1 second' where key = ${key}`
    expect(BarrierNotFound.isInstance(await rejection(short.arrive()))).toBe(true)
    expect(await short.create()).toBe(true)
    for (const make of [
      () => coord.barrier('k', { parties: 1.5, ttlMs: 1_000 }),
      () => coord.barrier('k', { parties: 2, ttlMs: -1 }),
      () => coord.barrier('y'.repeat(10_000), { parties: 2, ttlMs: 1_000 }),
    ]) {
      let error: unknown
      try {
        make()
      } catch (caught) {
        error = caught
      }
      expect(InvalidOptionError.isInstance(error)).toBe(true)
    }
    expect(
      InvalidOptionError.isInstance(await rejection(short.wait({ timeoutMs: Number.NaN }))),
    ).toBe(true)
  })
})
