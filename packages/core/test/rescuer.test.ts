import { namespace } from '@iddqueue/schema'
import postgres from 'postgres'
import { describe, expect, it } from 'vitest'
import type { LogFields, Logger } from '../src/index.js'
import { rescuerLeadSql } from '../src/sql/rescuer-lead.js'
import { setupDatabase, states, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

/** A logger that records which messages it was given. */
function recording(): Logger & { readonly lines: string[] } {
  const lines: string[] = []
  const keep = (text: string, _fields?: LogFields) => {
    lines.push(text)
  }
  return { lines, debug: keep, info: keep, warn: keep, error: keep }
}

describe('the rescuer', () => {
  it('is one worker per namespace: the longest-registered live one recovers a dead worker’s messages', async () => {
    const queue = uniqueQueue()
    // Stale after 5 s: generous, so a loaded machine never makes the older worker look dead.
    const options = { heartbeatIntervalMs: 100, staleAfterMs: 5_000 }
    const oldLog = recording()
    const newLog = recording()
    const older = db.broker({ logger: oldLog })
    const newer = db.broker({ logger: newLog })
    // The workers consume another queue, so they never claim the dead worker's message.
    older.actor('idle_a', () => {}, { queue: `${queue}_a` })
    newer.actor('idle_b', () => {}, { queue: `${queue}_b` })
    const first = older.worker(options)
    await first.start()
    const second = newer.worker(options)
    await second.start()
    // A worker that died holding a message: its heartbeat is long past.
    const dead = crypto.randomUUID()
    await db.sql`insert into iddqueue.workers (id, host, pid, queues, concurrency, started_at, heartbeat_at)
      values (${dead}, 'gone', 1, ${[queue]}, 1, now() - interval '1 hour', now() - interval '1 hour')`
    const [message] =
      await db.sql`insert into iddqueue.messages (id, queue, actor, state, worker_id, args, options)
      values (${crypto.randomUUID()}, ${queue}, 'lost', 'consumed', ${dead}, '[]', '{}') returning id`
    expect(message).toBeDefined()
    const recovered = (lines: string[]) => lines.includes('recovered messages of dead workers')
    // The log line, not the row: the recovery commits before its worker logs
    // it, so a loaded machine can show the row queued first.
    await until(
      () => recovered(oldLog.lines) || recovered(newLog.lines),
      20_000,
      'a worker to recover the dead worker’s message',
    )
    expect((await states(db.sql, { queue })).queued).toBe(1)
    expect(recovered(oldLog.lines)).toBe(true)
    expect(recovered(newLog.lines)).toBe(false)
    await Promise.all([first.stop(), second.stop()])
  })

  it('a leader stalled inside its sweep transaction loses the lock after stale-after ms', async () => {
    const ns = namespace()
    const key = ns.lockKey('rescuer').toString()
    const staleAfterMs = 1_000
    // The longest-registered live worker: the one that leads.
    const leader = crypto.randomUUID()
    await db.sql`insert into iddqueue.workers (id, host, pid, queues, concurrency, started_at, heartbeat_at)
      values (${leader}, 'stalled', 1, '{}', 1, now() - interval '100 years', now())`
    const stalled = postgres(db.url, { max: 1, onnotice: () => {} })
    const other = postgres(db.url, { max: 1, onnotice: () => {} })
    try {
      const [backend] = await stalled`select pg_backend_pid() as pid`
      const pid = backend!.pid as number
      // As if the network dropped every packet right after the lead statement:
      // the transaction stays open and the client never speaks again.
      const sweep = stalled.begin(async (tx) => {
        const [row] = await tx.unsafe(rescuerLeadSql(ns), [key, staleAfterMs, leader])
        expect(row?.lead).toBe(true)
        await new Promise(() => {})
      })
      sweep.catch(() => {})
      await until(
        async () =>
          (await db.sql`select 1 from pg_locks where pid = ${pid} and locktype = 'advisory'`)
            .length === 1,
        10_000,
        'the stalled leader to hold the lock',
      )
      // The server ends the idle transaction: the lock is free for the next leader.
      await until(
        async () => (await db.sql`select 1 from pg_stat_activity where pid = ${pid}`).length === 0,
        20_000,
        'the server to end the stalled session',
      )
      const [free] = await other.begin(
        (tx) => tx`select pg_try_advisory_xact_lock(${key}::bigint) as taken`,
      )
      expect(free?.taken).toBe(true)
    } finally {
      await db.sql`delete from iddqueue.workers where id = ${leader}`
      await Promise.all([stalled.end({ timeout: 1 }), other.end({ timeout: 1 })])
    }
  })
})
