import type { Broker } from '@iddqueue/core'
import { collectNotifications } from '@iddqueue/testing'
import { describe, expect, it } from 'vitest'
import { ResultMissing, type ResultsPlugin, ResultTimeout, results } from '../src/index.js'
import { rejection, setupDatabase } from './helpers.js'

const db = setupDatabase()

async function resultRows(prefix: string) {
  return db.sql.unsafe(
    `select message_id::text as id, status, value from shared.${prefix}results order by message_id`,
  )
}

describe('two namespaces in one schema (prefixes a_ and b_)', () => {
  it('store, notify and read their own results, even for the same message id', async () => {
    const plugins: Record<'a' | 'b', ResultsPlugin> = { a: results(), b: results() }
    const a = db.broker({ namespace: { schema: 'shared', prefix: 'a_' }, plugins: [plugins.a] })
    const b = db.broker({ namespace: { schema: 'shared', prefix: 'b_' }, plugins: [plugins.b] })
    await a.migrate()
    await b.migrate()
    const options = { queue: 'math', storeResults: true }
    const addA = a.actor('add', (x: number, y: number) => x + y, options)
    b.actor('add', (x: number, y: number) => 1_000 + x + y, { ...options, resultTtlMs: 1 })
    const sent = await addA.send(20, 22)
    // The same message id, queued in b, whose worker is not running yet.
    const twin = await b.enqueue(b.message('add', [1, 2], { id: sent.id, queue: 'math' }))
    expect(twin.id).toBe(sent.id)
    const notified = {
      a: await collectNotifications(db.sql, a.namespace.channel('result')),
      b: await collectNotifications(db.sql, b.namespace.channel('result')),
    }
    // Both block on the same id; only a's may be answered.
    const waitingA = sent.result({ timeoutMs: 20_000 })
    // Handled at once: on a slow machine it times out before a's drain ends.
    const waitingB = rejection(twin.result({ timeoutMs: 2_000 }))

    await drain(a)
    expect(await waitingA).toBe(42)
    expect(await waitingB).toBeInstanceOf(ResultTimeout)
    expect(await resultRows('a_')).toEqual([{ id: sent.id, status: 'success', value: 42 }])
    expect(await resultRows('b_')).toEqual([])
    expect(await notified.a.settled()).toEqual([sent.id])
    expect(await notified.b.settled()).toEqual([])
    const [twinRow] = await db.sql`select state from shared.b_messages where id = ${sent.id}`
    expect(twinRow?.state).toBe('queued')

    // b runs its own: its result (with a 1 ms TTL) is b's, a's stays 42.
    await drain(b)
    expect(await resultRows('b_')).toEqual([{ id: sent.id, status: 'success', value: 1_003 }])
    expect(await notified.b.settled()).toEqual([sent.id])
    expect(await notified.a.settled()).toEqual([])
    expect(await sent.result()).toBe(42)

    // Purging a's expired results leaves b's expired one; b's purge takes it.
    expect(await plugins.a.purgeResults()).toBe(0)
    expect(await resultRows('b_')).toHaveLength(1)
    expect(await plugins.b.purgeResults()).toBe(1)
    expect(await rejection(twin.result({ block: false }))).toBeInstanceOf(ResultMissing)
    expect(await resultRows('a_')).toEqual([{ id: sent.id, status: 'success', value: 42 }])
    await Promise.all([notified.a.stop(), notified.b.stop()])
  })
})

async function drain(broker: Broker) {
  const worker = broker.worker({ pollIntervalMs: 50 })
  await worker.start()
  await broker.join({ queues: ['math'], timeoutMs: 20_000 })
  await worker.stop()
}
