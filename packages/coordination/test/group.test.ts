import type { Broker } from '@iddqueue/core'
import { InvalidOptionError } from '@iddqueue/core'
import { results } from '@iddqueue/results'
import { describe, expect, it } from 'vitest'
import { coordination } from '../src/index.js'
import { drain, rejection, runChild, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

/** Actors for a group: members that log and maybe fail, and callbacks that log. */
function actors(broker: Broker, queue: string) {
  const calls: string[] = []
  const member = broker.actor(
    'member',
    (label: string) => {
      if (label === 'bad') throw new Error('bad member')
      return label.toUpperCase()
    },
    { queue, maxRetries: 0, storeResults: true },
  )
  const completed = broker.actor('completed', (name: string) => void calls.push(`done:${name}`), {
    queue,
  })
  const failed = broker.actor('failed', (name: string) => void calls.push(`failed:${name}`), {
    queue,
  })
  return { calls, member, completed, failed }
}

describe('group callbacks', () => {
  it('sends onCompletion once when every member succeeded (with the results plugin too)', async () => {
    const coord = coordination({ purgeIntervalMs: false })
    const broker = db.broker({ plugins: [results(), coord] })
    await broker.ready()
    const queue = uniqueQueue()
    const { calls, member, completed, failed } = actors(broker, queue)
    const group = await coord
      .group(['a', 'b', 'c', 'd', 'e'].map((label) => member.message(label)))
      .run({ onCompletion: completed.message('g1'), onFailure: failed.message('g1') })
    await drain(broker, [queue])
    expect(calls).toEqual(['done:g1'])
    expect(await group.completedCount()).toBe(5)
    expect(await group.results({ timeoutMs: 10_000 })).toEqual(['A', 'B', 'C', 'D', 'E'])
  })

  it('works without the results plugin, and counts a redelivered member once', async () => {
    const coord = coordination({ purgeIntervalMs: false })
    const broker = db.broker({ plugins: [coord] })
    await broker.ready()
    const queue = uniqueQueue()
    const calls: string[] = []
    const member = broker.actor('member', (label: string) => void calls.push(label), { queue })
    const completed = broker.actor('completed', (name: string) => void calls.push(`done:${name}`), {
      queue,
    })
    const [first, ...rest] = ['a', 'b', 'c'].map((label) => member.message(label))
    const group = await coord
      .group([first!, ...rest])
      .run({ onCompletion: completed.message('g2') })
    // Deliver one member, then hand it back as if its worker had died after
    // acknowledging: it runs again, with the others.
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 20 })
    await db.sql`update iddqueue.messages set eta = now() + interval '1 hour' where id = any(${rest.map((m) => m.id)}::uuid[])`
    await worker.start()
    await until(async () => (await group.completedCount()) === 1, 20_000, 'the first member')
    await worker.stop()
    await db.sql`update iddqueue.messages set state = 'queued', eta = now() where id = ${group.messages[0]!.id}`
    await db.sql`update iddqueue.messages set eta = now() where id = any(${rest.map((m) => m.id)}::uuid[])`
    await drain(broker, [queue])
    expect(calls.filter((c) => c === 'a')).toHaveLength(2)
    expect(calls.filter((c) => c.startsWith('done:'))).toEqual(['done:g2'])
    expect(await group.completedCount()).toBe(3)
  })

  it('sends onFailure once when a member is rejected for good, and never onCompletion', async () => {
    const coord = coordination({ purgeIntervalMs: false })
    const broker = db.broker({ plugins: [results(), coord] })
    await broker.ready()
    const queue = uniqueQueue()
    const { calls, member, completed, failed } = actors(broker, queue)
    await coord
      .group(['a', 'bad', 'bad', 'b'].map((label) => member.message(label)))
      .run({ onCompletion: completed.message('g3'), onFailure: failed.message('g3') })
    await drain(broker, [queue])
    expect(calls).toEqual(['failed:g3'])
  })

  it('sends onCompletion once after a worker is killed mid-group and its member is redelivered', async () => {
    const coord = coordination({ purgeIntervalMs: false })
    const broker = db.broker({ plugins: [coord] })
    await broker.ready()
    const queue = uniqueQueue()
    const calls: string[] = []
    const member = broker.actor('member', (label: string) => void calls.push(label), { queue })
    const completed = broker.actor('completed', (name: string) => void calls.push(`done:${name}`), {
      queue,
    })
    const labels = ['a', 'b', 'hang', 'c', 'd', 'e']
    const group = await coord
      .group(labels.map((label) => member.message(label)))
      .run({ onCompletion: completed.message('g4') })
    let hanging = false
    const child = runChild<{ hanging?: boolean }>('group-worker.mjs', [db.url, queue], (m) => {
      if (m.hanging) hanging = true
    })
    child.done.catch(() => {})
    await until(
      async () => hanging && (await group.completedCount()) === 5,
      30_000,
      'the child to hang',
    )
    child.kill('SIGKILL')
    // A surviving worker here recovers the dead worker's member and runs it.
    await drain(broker, [queue])
    expect(calls.filter((c) => c === 'hang')).toHaveLength(1)
    expect(calls.filter((c) => c.startsWith('done:'))).toEqual(['done:g4'])
    expect(await group.completedCount()).toBe(6)
  }, 90_000)

  it('bad input: typed errors before anything is stored', async () => {
    const coord = coordination({ purgeIntervalMs: false })
    const broker = db.broker({ plugins: [coord] })
    await broker.ready()
    const queue = uniqueQueue()
    const member = broker.actor('member', (label: string) => label, { queue })
    const one = member.message('a')
    for (const make of [
      () => coord.group([]),
      () => coord.group([one, one]),
      () => coord.group(['x'] as never),
      () => coord.group(Array.from({ length: 1_001 }, () => member.message('a'))),
    ]) {
      let error: unknown
      try {
        make()
      } catch (caught) {
        error = caught
      }
      expect(InvalidOptionError.isInstance(error)).toBe(true)
    }
    const group = coord.group([member.message('b')])
    expect(
      InvalidOptionError.isInstance(await rejection(group.run({ onCompletion: 'x' as never }))),
    ).toBe(true)
    expect(InvalidOptionError.isInstance(await rejection(group.run({ ttlMs: 0 })))).toBe(true)
    expect(InvalidOptionError.isInstance(await rejection(group.run({ transaction: {} })))).toBe(
      true,
    )
    const [row] = await db.sql`select
      (select count(*) from iddqueue.coordination_groups where id = ${group.id}) +
      (select count(*) from iddqueue.messages where queue = ${queue}) as n`
    expect(Number(row?.n)).toBe(0)
  })
})
