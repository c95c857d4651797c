import { describe, expect, it } from 'vitest'
import { JoinTimeoutError } from '../src/index.js'
import { setupDatabase, states, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

describe('broker.join()', () => {
  it('waits out a connection killed under its poll, then resolves once the queue is empty', async () => {
    const queue = uniqueQueue('join_lost')
    const broker = db.broker()
    const job = broker.actor('job', () => {}, { queue })
    await job.send()

    // Hold join's poll on a lock, so that its statement is in flight when its connection is killed.
    const holder = await db.sql.reserve()
    try {
      await holder`begin`
      await holder`lock table iddqueue.messages in access exclusive mode`
      const joined = broker.join({ queues: [queue], timeoutMs: 30_000 })
      const outcome = joined.then(
        () => 'resolved',
        (error: unknown) => error,
      )
      let pid = 0
      await until(
        async () => {
          const [row] = await db.sql<{ pid: number }[]>`select pid from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query like '%"pending"%'`
          pid = row?.pid ?? 0
          return pid !== 0
        },
        10_000,
        'join to wait on the lock',
      )
      await db.sql`select pg_terminate_backend(${pid})`
      await holder`commit`
      const worker = broker.worker({ queues: [queue], pollIntervalMs: 50 })
      await worker.start()
      expect(await outcome).toBe('resolved')
      expect(await states(db.sql, { queue })).toEqual({ done: 1 })
      await worker.stop()
    } finally {
      holder.release()
    }
  })

  it('still gives up with JoinTimeoutError when the queue is not emptied in time', async () => {
    const queue = uniqueQueue('join_timeout')
    const broker = db.broker()
    await broker.actor('job', () => {}, { queue }).send()
    const error = await broker.join({ queues: [queue], timeoutMs: 100 }).catch((e: unknown) => e)
    expect(JoinTimeoutError.isInstance(error)).toBe(true)
    expect((error as Error).message).toBe(
      `Queues ${queue} still hold 1 queued or consumed messages after 100 ms`,
    )
  })
})
