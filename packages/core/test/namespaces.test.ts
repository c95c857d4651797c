import { describe, expect, it } from 'vitest'
import { attemptHistory, type IddqueuePlugin } from '../src/index.js'
import type { BrokerClass } from '../src/internal.js'
import { purge } from '../src/ops/maintenance.js'
import { emptyClaimsSince, recordClaims, setupDatabase, until } from './helpers.js'

const db = setupDatabase()

describe('two namespaces in one database', () => {
  it('never see each other’s messages, wake-ups or workers, even with the same queue and actor names', async () => {
    const a = db.broker({ namespace: { schema: 'app_a' } })
    const b = db.broker({ namespace: { schema: 'app_b', prefix: 'jobs_' } })
    await Promise.all([a.migrate(), b.migrate()])
    const ranIn: Record<string, number[]> = { a: [], b: [] }
    const inA = a.actor('work', (i: number) => {
      ranIn.a!.push(i)
    })
    const inB = b.actor('work', (i: number) => {
      ranIn.b!.push(i)
    })
    const wakeB: string[] = []
    const listener = await db.sql.listen(b.namespace.channel('wake'), (payload) =>
      wakeB.push(payload),
    )
    const claims = recordClaims(a)
    const worker = a.worker({ pollIntervalMs: 50 })
    await worker.start()
    await inB.send(1)
    await inA.send(2)
    await a.join()
    // a's worker looked again after both sends and found nothing: b's message is not its.
    await emptyClaimsSince(claims, [worker.id], performance.now())
    expect(ranIn).toEqual({ a: [2], b: [] })
    const [inTableB] = await db.sql`select state from app_b.jobs_messages`
    expect(inTableB?.state).toBe('queued')
    await b.pause('default')
    expect(await a.isPaused('default')).toBe(false)
    await inA.send(3)
    await until(() => ranIn.a!.length === 2, 5_000, 'namespace a to ignore b’s pause')
    expect(wakeB).toEqual(['default'])
    const workersB = await db.sql`select id from app_b.jobs_workers`
    expect(workersB).toHaveLength(0)
    await worker.stop()
    await listener.unlisten()
  })

  it('store a message sent again once in a prefixed table', async () => {
    const broker = db.broker({ namespace: { schema: 'app_c', prefix: 'q_' } })
    await broker.migrate()
    const message = broker.actor('work', (i: number) => i).message(1)
    await broker.enqueue(message)
    await broker.enqueueMany([message])
    const rows = await db.sql`select id from app_c.q_messages`
    expect(rows).toEqual([{ id: message.id }])
  })
})

/** Two namespaces in one schema, told apart by their prefix only: the closest neighbours. */
function twoNamespaces(plugins: () => IddqueuePlugin[] = () => []) {
  const a = db.broker({ namespace: { schema: 'shared', prefix: 'a_' }, plugins: plugins() })
  const b = db.broker({ namespace: { schema: 'shared', prefix: 'b_' }, plugins: plugins() })
  return { a, b }
}

async function count(table: string): Promise<number> {
  const [row] = await db.sql.unsafe(`select count(*)::int as n from shared.${table}`)
  return row?.n as number
}

describe('two namespaces in one schema (prefixes a_ and b_)', () => {
  it('keep their own dedup keys, queue control, workers, attempt history, failures and cancellations', async () => {
    const histories: ReturnType<typeof attemptHistory>[] = []
    const { a, b } = twoNamespaces(() => {
      histories.push(attemptHistory())
      return [histories.at(-1)!]
    })
    const [historyA, historyB] = histories as [
      ReturnType<typeof attemptHistory>,
      ReturnType<typeof attemptHistory>,
    ]
    await a.migrate()
    await b.migrate()
    const ran: Record<'a' | 'b', string[]> = { a: [], b: [] }
    const declare = (broker: typeof a, side: 'a' | 'b') =>
      broker.actor(
        'work',
        (tag: string) => {
          ran[side].push(tag)
          if (tag.startsWith('fail')) throw new TypeError(`${side} failed ${tag}`)
        },
        { queue: 'jobs', maxRetries: 0 },
      )
    const workA = declare(a, 'a')
    const workB = declare(b, 'b')

    // The same dedup key in both: each namespace stores its own message.
    const dedup = { dedupKey: 'daily', dedupTtlMs: 60_000 }
    const firstA = await workA.sendWithOptions({ args: ['a1'], ...dedup })
    const firstB = await workB.sendWithOptions({ args: ['b1'], ...dedup })
    expect(firstB.id).not.toBe(firstA.id)
    const againA = await workA.sendWithOptions({ args: ['a2'], ...dedup })
    expect(againA.id).toBe(firstA.id)
    expect(await count('a_deduplication')).toBe(1)
    expect(await count('b_deduplication')).toBe(1)

    // b pauses the queue both use; a's worker keeps running it.
    await b.pause('jobs')
    expect(await a.isPaused('jobs')).toBe(false)
    expect(await b.pausedQueues()).toEqual(['jobs'])
    expect(await a.pausedQueues()).toEqual([])
    expect(await count('a_queue_control')).toBe(0)

    const failA = await workA.send('fail-a')
    const queuedB = await workB.send('b-queued')
    // b's message, by id, is nothing to a: missing to cancel, unknown to read.
    expect(await a.cancel(queuedB.id)).toEqual({ status: 'missing', state: null })
    expect(await a.getMessage(queuedB.id)).toBeUndefined()

    const worker = a.worker({ pollIntervalMs: 50 })
    await worker.start()
    await a.join({ queues: ['jobs'] })
    expect(ran.a.sort()).toEqual(['a1', 'fail-a'])
    expect(ran.b).toEqual([])
    const [registered] = await db.sql`select count(*)::int as n from shared.a_workers`
    expect(registered?.n).toBe(1)
    expect(await count('b_workers')).toBe(0)

    // Failures and history are a's alone.
    expect((await a.listFailed()).items.map((item) => item.id)).toEqual([failA.id])
    expect((await b.listFailed()).items).toEqual([])
    expect((await historyA.listAttempts(failA.id)).items).toHaveLength(1)
    expect((await historyB.listAttempts(failA.id)).items).toEqual([])
    expect(await count('a_attempts')).toBe(2)
    expect(await count('b_attempts')).toBe(0)
    expect(await a.retryFailed(queuedB.id)).toMatchObject({ status: 'missing' })

    // b's rows are untouched: both still queued, the pause still stands.
    const rowsB = await db.sql`select id, state from shared.b_messages order by id`
    expect(rowsB).toEqual([firstB.id, queuedB.id].sort().map((id) => ({ id, state: 'queued' })))
    expect(await b.cancel(queuedB.id)).toEqual({ status: 'cancelled', state: 'cancelled' })
    const [stillA] = await db.sql`select state from shared.a_messages where id = ${firstA.id}`
    expect(stillA?.state).toBe('done')

    // a purges everything finished: b's cancelled row and dedup key stay.
    expect(await a.purge({ olderThanMs: 0 })).toMatchObject({ messages: 2 })
    expect(await count('a_messages')).toBe(0)
    expect(await count('b_messages')).toBe(2)
    expect(await b.recover({ staleAfterMs: 0 })).toBe(0)
    await worker.stop()
    expect(await count('a_workers')).toBe(0)
  })

  it('take their own advisory locks: a held purge or rescuer lock of one never stops the other', async () => {
    const { a, b } = twoNamespaces()
    await a.migrate()
    await b.migrate()
    for (const purpose of ['purge', 'rescuer', 'results-purge']) {
      expect(a.namespace.lockKey(purpose)).not.toBe(b.namespace.lockKey(purpose))
    }
    const contextA = (a as unknown as BrokerClass).context
    const contextB = (b as unknown as BrokerClass).context
    const holder = await db.sql.reserve()
    try {
      await holder`begin`
      await holder`select pg_advisory_xact_lock(${a.namespace.lockKey('purge').toString()}::bigint)`
      expect(await purge(contextA, { exclusive: true })).toMatchObject({ skipped: true })
      expect(await purge(contextB, { exclusive: true })).toEqual({
        messages: 0,
        deduplicationKeys: 0,
      })
      await holder`commit`

      // A dead worker holding a message in each namespace; a's rescuer lock is held.
      const dead = crypto.randomUUID()
      for (const prefix of ['a_', 'b_']) {
        await db.sql.unsafe(
          `insert into shared.${prefix}workers (id, host, pid, queues, concurrency, started_at, heartbeat_at)
           values ($1, 'gone', 1, '{lost}', 1, now() - interval '1 hour', now() - interval '1 hour')`,
          [dead],
        )
        await db.sql.unsafe(
          `insert into shared.${prefix}messages (id, queue, actor, state, worker_id, args, options)
           values ($1, 'lost', 'lost', 'consumed', $2, '[]', '{}')`,
          [crypto.randomUUID(), dead],
        )
      }
      await holder`begin`
      await holder`select pg_advisory_xact_lock(${a.namespace.lockKey('rescuer').toString()}::bigint)`
      const recovered: Record<'a' | 'b', number> = { a: 0, b: 0 }
      a.on('messages:recovered', (event) => {
        recovered.a += event.messages.length
      })
      b.on('messages:recovered', (event) => {
        recovered.b += event.messages.length
      })
      a.actor('idle', () => {}, { queue: 'idle' })
      b.actor('idle', () => {}, { queue: 'idle' })
      const options = { heartbeatIntervalMs: 50, staleAfterMs: 5_000 }
      const workers = [a.worker(options), b.worker(options)]
      await Promise.all(workers.map((worker) => worker.start()))
      await until(() => recovered.b === 1, 20_000, 'b’s rescuer to recover b’s message')
      // a's rescuer cannot take its lock, so a's message waits for it.
      const [heldA] = await db.sql`select state from shared.a_messages where queue = 'lost'`
      expect(heldA?.state).toBe('consumed')
      expect(recovered.a).toBe(0)
      await holder`commit`
      await until(() => recovered.a === 1, 20_000, 'a’s rescuer to recover a’s message')
      expect(recovered.b).toBe(1)
      await Promise.all(workers.map((worker) => worker.stop()))
    } finally {
      await holder`rollback`.catch(() => {})
      holder.release()
    }
  })
})
