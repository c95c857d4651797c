import type { TransactionalContext } from '@iddqueue/core'
import { beforeAll, describe, expect, it } from 'vitest'
import { results } from '../src/index.js'
import { resultRows, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()
const WAIT_MS = 60_000

beforeAll(async () => {
  await db.sql`create table if not exists effects (message_id uuid not null)`
})

function gate() {
  let open: () => void = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { open, opened }
}

describe('results of transactional actors', () => {
  it('the stored result and the onSuccess callback commit with the effect, or not at all', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('tx')
    const notify = broker.actor('notify', (_message: unknown, _result: unknown) => {}, {
      queue: uniqueQueue('callbacks'),
    })
    const started = gate()
    const proceed = gate()
    let holdFirst = true
    const charge = broker.actor(
      'charge',
      async (cents: number, ctx: TransactionalContext) => {
        await ctx.transaction`insert into effects values (${ctx.message.id})`
        if (holdFirst) {
          holdFirst = false
          started.open()
          await proceed.opened
        }
        return { charged: cents }
      },
      { queue, transactional: true, storeResults: true, onSuccess: notify },
    )
    const lost = await charge.send(1)
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 50 })
    await worker.start()
    await started.opened
    // Crash recovery's move, as if this worker had looked dead: the claim is gone.
    await db.sql`update iddqueue.messages set state = 'queued', worker_id = null, eta = now() + interval '1 hour'
      where id = ${lost.id}`
    proceed.open()
    const kept = await charge.send(2)
    expect(await kept.result({ timeoutMs: WAIT_MS })).toEqual({ charged: 2 })
    await until(
      async () =>
        (await db.sql`select 1 from iddqueue.messages where id = ${lost.id} and state = 'queued'`)
          .length === 1 &&
        (await db.sql`select 1 from iddqueue.messages where id = ${kept.id} and state = 'done'`)
          .length === 1,
      WAIT_MS,
      'both outcomes',
    )
    await worker.stop()
    const rows = await resultRows(db.sql, [lost.id, kept.id])
    expect(rows.has(lost.id)).toBe(false)
    expect(rows.get(kept.id)?.status).toBe('success')
    const effects = await db.sql`select message_id from effects
      where message_id = any(${[lost.id, kept.id]}::uuid[])`
    expect(effects.map((r) => r.message_id)).toEqual([kept.id])
    const callbacks = await db.sql`select args from iddqueue.messages where actor = 'notify'`
    expect(callbacks).toHaveLength(1)
    expect(callbacks[0]?.args[1]).toEqual({ charged: 2 })
  })
})
