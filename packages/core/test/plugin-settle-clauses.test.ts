import { describe, expect, it } from 'vitest'
import type { IddqueuePlugin } from '../src/index.js'
import { collectNotifications, setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

/** Records each settled message of the `audited` actor in `table`, and notifies how many, from the settle statement. */
function audit(table: string, channel: string): IddqueuePlugin {
  return {
    name: 'audit',
    settleClauses: () => ({
      concerns: (message) => message.actor === 'audited',
      ctes: `audited as (
  insert into ${table} (id, state, queue)
  select id, state, queue from settled where options->>'audit' = 'yes' returning id
), audit_seen as (select count(*)::int as n from settled)`,
      effect: `(select pg_notify('${channel}', n::text) from audit_seen)`,
    }),
    messageOptions: (build) => (build.actorName === 'audited' ? { audit: 'yes' } : undefined),
  }
}

describe('IddqueuePlugin.settleClauses (decision 0016)', () => {
  for (const deleteOnSuccess of [false, true]) {
    it(`writes the plugin's CTEs with the outcomes, only for batches they concern (deleteOnSuccess: ${deleteOnSuccess})`, async () => {
      const table = `audit_${deleteOnSuccess ? 'del' : 'keep'}`
      const channel = `audit_${deleteOnSuccess ? 'del' : 'keep'}`
      await db.sql.unsafe(
        `create table if not exists ${table} (id uuid primary key, state text not null, queue text not null)`,
      )
      const broker = db.broker({ plugins: [audit(table, channel)], deleteOnSuccess })
      const queue = uniqueQueue()
      const audited = broker.actor(
        'audited',
        (ok: boolean) => {
          if (!ok) throw new Error('no')
        },
        { queue, maxRetries: 0 },
      )
      const other = broker.actor('other', () => {}, { queue })
      const notified = await collectNotifications(db.sql, channel)
      try {
        const plain = await other.send()
        const worker = broker.worker({ queues: [queue], pollIntervalMs: 20 })
        await worker.start()
        await broker.join({ queues: [queue], timeoutMs: 20_000 })
        // A batch the clauses do not concern is settled by core's statements alone.
        expect(await notified.settled()).toEqual([])
        const ok = await audited.send(true)
        const failed = await audited.send(false)
        await broker.join({ queues: [queue], timeoutMs: 20_000 })
        await worker.stop()
        const rows = await db.sql.unsafe(`select id, state, queue from ${table} where queue = $1`, [
          queue,
        ])
        expect(new Map(rows.map((r) => [r.id as string, r.state as string]))).toEqual(
          new Map([
            [ok.id, 'done'],
            [failed.id, 'rejected'],
          ]),
        )
        // The effect ran once per settle statement that concerned them, after the CTEs.
        const counts = (await notified.settled()).map(Number)
        expect(counts.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(2)
        const [stored] = await db.sql`select count(*)::int as n from iddqueue.messages
          where id = any(${[ok.id, plain.id]}::uuid[])`
        expect(stored?.n).toBe(deleteOnSuccess ? 0 : 2)
      } finally {
        await notified.stop()
      }
    })
  }

  it('takes an effect without CTEs: a notification per settle of the messages it concerns', async () => {
    const channel = 'settle_effect_only'
    const plugin: IddqueuePlugin = {
      name: 'effect-only',
      settleClauses: () => ({
        concerns: (message) => message.actor === 'noticed',
        effect: `(select pg_notify('${channel}', count(*)::text) from settled)`,
      }),
    }
    const broker = db.broker({ plugins: [plugin] })
    const queue = uniqueQueue()
    const noticed = broker.actor('noticed', () => {}, { queue })
    const notified = await collectNotifications(db.sql, channel)
    try {
      await noticed.send()
      const worker = broker.worker({ queues: [queue], pollIntervalMs: 20 })
      await worker.start()
      await broker.join({ queues: [queue], timeoutMs: 20_000 })
      await worker.stop()
      expect(await notified.settled()).toEqual(['1'])
    } finally {
      await notified.stop()
    }
  })

  it('acknowledges successes with the clauses in one statement: the ids it did not write come back, the effect runs once', async () => {
    const channel = 'settle_ack_effect'
    const plugin: IddqueuePlugin = {
      name: 'ack-effect',
      settleClauses: () => ({
        concerns: () => true,
        effect: `(select pg_notify('${channel}', count(*)::text) from settled)`,
      }),
    }
    const broker = db.broker({ plugins: [plugin] })
    await broker.ready()
    const queue = uniqueQueue()
    const actor = broker.actor('acked', () => {}, { queue })
    const held = await actor.send()
    const lost = await actor.send()
    const [mine, theirs] = [crypto.randomUUID(), crypto.randomUUID()]
    await db.sql`update iddqueue.messages set state = 'consumed', worker_id = ${mine} where id = ${held.id}`
    await db.sql`update iddqueue.messages set state = 'consumed', worker_id = ${theirs} where id = ${lost.id}`
    const notified = await collectNotifications(db.sql, channel)
    try {
      const ack = broker.context.statements.settleWith!.ack
      // Usually no row comes back: the effect runs all the same.
      expect(await db.sql.unsafe(ack, [[held.id], mine])).toEqual([])
      const refused = await db.sql.unsafe(ack, [[lost.id], mine])
      expect(refused.map((r) => r.id)).toEqual([lost.id])
      expect(await notified.settled()).toEqual(['1', '0'])
      const rows = await db.sql`select id, state from iddqueue.messages where queue = ${queue}`
      expect(new Map(rows.map((r) => [r.id as string, r.state as string]))).toEqual(
        new Map([
          [held.id, 'done'],
          [lost.id, 'consumed'],
        ]),
      )
    } finally {
      await notified.stop()
    }
  })
})
