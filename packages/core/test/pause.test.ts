import { describe, expect, it } from 'vitest'
import { assertQueueName, InvalidIdentifierError } from '../src/index.js'
import {
  emptyClaimsSince,
  type RecordedClaim,
  recordClaims,
  setupDatabase,
  sleep,
  states,
  uniqueQueue,
  until,
} from './helpers.js'

const db = setupDatabase()

describe('pause and resume', () => {
  it('with 3 workers and a backlog: nothing starts once pause() returns; all complete after resume', async () => {
    const queue = uniqueQueue('paused')
    const other = uniqueQueue('other')
    const starts: { i: number; at: number }[] = []
    const otherDone: number[] = []
    const brokers = [db.broker(), db.broker(), db.broker()]
    const actors = brokers.map((broker) => ({
      job: broker.actor(
        'job',
        async (i: number) => {
          starts.push({ i, at: performance.now() })
          await sleep(15)
        },
        { queue },
      ),
      side: broker.actor(
        'side',
        (i: number) => {
          otherDone.push(i)
        },
        { queue: other },
      ),
    }))
    const { job, side } = actors[0]!
    await brokers[0]!.enqueueMany(Array.from({ length: 300 }, (_, i) => job.message(i)))
    const claims: RecordedClaim[] = []
    for (const broker of brokers) recordClaims(broker, claims)
    const workers = brokers.map((broker) =>
      broker.worker({ concurrency: 2, prefetch: 10, pollIntervalMs: 30_000 }),
    )
    await Promise.all(workers.map((w) => w.start()))
    await until(() => starts.length >= 20, 10_000, 'the backlog to start')

    const result = await brokers[1]!.pause(queue)
    const pausedAt = performance.now()
    expect(result).toEqual({ queue, workers: 3, acknowledged: 3 })
    expect(await brokers[2]!.isPaused(queue)).toBe(true)
    expect(await brokers[2]!.isPaused(other)).toBe(false)

    // Producers keep publishing; another queue keeps running.
    await brokers[0]!.enqueueMany(Array.from({ length: 10 }, (_, i) => job.message(300 + i)))
    await side.send(1)
    await until(() => otherDone.length === 1, 5_000, 'the other queue')
    // Every worker claimed after the pause (its handlers ended, or these sends
    // woke it) and found nothing it may take, with the backlog still queued.
    await emptyClaimsSince(
      claims,
      workers.map((w) => w.id),
      pausedAt,
    )
    expect(starts.filter((s) => s.at > pausedAt)).toEqual([])
    const paused = await states(db.sql, { queue })
    expect(paused.consumed ?? 0).toBe(0)
    expect(paused.queued).toBe(310 - starts.length)
    const [budget] = await db.sql`select count(*)::int as n from iddqueue.messages
      where queue = ${queue} and state = 'queued' and (retries <> 0 or worker_id is not null)`
    expect(budget?.n).toBe(0)

    // Persistent: a worker started after the pause runs nothing either.
    await workers[0]!.stop()
    const sinceFresh = performance.now()
    const fresh = brokers[0]!.worker({ concurrency: 2 })
    await fresh.start()
    await emptyClaimsSince(claims, [fresh.id], sinceFresh, 'an empty claim of the fresh worker')
    expect(starts.filter((s) => s.at > pausedAt)).toEqual([])

    const resumedAt = performance.now()
    await brokers[2]!.resume(queue)
    await until(() => starts.some((s) => s.at > resumedAt), 5_000, 'a start after resume')
    await brokers[0]!.join({ queues: [queue], timeoutMs: 30_000 })
    await Promise.all([...workers.slice(1), fresh].map((w) => w.stop()))
    expect(new Set(starts.map((s) => s.i)).size).toBe(310)
    expect(starts).toHaveLength(310)
    expect(await brokers[0]!.pausedQueues()).toEqual([])
  }, 60_000)

  it('resume of a queue that is not paused changes nothing; bad names are refused', async () => {
    const broker = db.broker()
    await broker.resume('never-paused')
    expect(await broker.isPaused('never-paused')).toBe(false)
    await expect(broker.pause('bad queue')).rejects.toThrow('Invalid queue name "bad queue"')
    await expect(broker.isPaused('bad queue')).rejects.toThrow(InvalidIdentifierError)
    expect(() => assertQueueName('')).toThrow('Invalid queue name ""')
    const [row] =
      await db.sql`select count(*)::int as n from iddqueue.queue_control where queue = 'never-paused'`
    expect(row?.n).toBe(0)
  })

  it('a pause with no worker running returns at once and is seen by workers that start later', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    let ran = 0
    const job = broker.actor(
      'job',
      () => {
        ran++
      },
      { queue },
    )
    expect(await broker.pause(queue)).toEqual({ queue, workers: 0, acknowledged: 0 })
    await job.send()
    // A sentinel on a second queue, sent after the paused one: the claim that
    // brings it (one statement over both queues) has passed the paused message over.
    const sentinelQueue = uniqueQueue('sentinel')
    let sentinel = false
    const probe = broker.actor(
      'sentinel',
      () => {
        sentinel = true
      },
      { queue: sentinelQueue },
    )
    await probe.send()
    const worker = broker.worker({ queues: [queue, sentinelQueue], pollIntervalMs: 50 })
    await worker.start()
    await until(() => sentinel, 20_000, 'the sentinel')
    // Had the pause been ignored, the same claim would have taken the job too.
    expect(await states(db.sql, { queue })).toEqual({ queued: 1 })
    expect(ran).toBe(0)
    await broker.resume(queue)
    await broker.join({ queues: [queue] })
    expect(ran).toBe(1)
    await worker.stop()
  })
})
