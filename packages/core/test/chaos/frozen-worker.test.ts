import { describe, expect, it } from 'vitest'
import { setupDatabase, uniqueQueue, until } from '../helpers.js'
import { enqueueAll } from './harness/producers.js'
import { WorkerProcess } from './harness/worker-process.js'

const db = setupDatabase()

describe('a worker frozen with SIGSTOP longer than staleAfterMs, then SIGCONT', () => {
  it('what it held runs elsewhere; its late outcomes are refused; it says so and carries on', async () => {
    const queue = uniqueQueue('frozen')
    const broker = db.broker({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
    const ran = new Map<number, number>()
    const work = broker.actor(
      'work',
      (i: number) => {
        ran.set(i, (ran.get(i) ?? 0) + 1)
      },
      { queue },
    )
    const count = 200
    await enqueueAll(
      count,
      (i) => work.message(i),
      (m) => broker.enqueueMany(m),
    )
    const frozen = new WorkerProcess(db.url, queue, {
      concurrency: 4,
      staleAfterMs: 1_000,
      handlerMs: 300,
    })
    await until(
      () => frozen.id !== '' && frozen.started.size >= 4,
      30_000,
      'the child to run handlers',
    )
    frozen.kill('SIGSTOP')
    const [held] = await db.sql`select count(*)::int as n from iddqueue.messages
      where worker_id = ${frozen.id} and state = 'consumed'`
    expect(held?.n).toBeGreaterThan(0)
    const recovered = new Set<string>()
    broker.on('messages:recovered', ({ messages }) => {
      for (const m of messages) recovered.add(m.id)
    })
    // A survivor here, with the same short liveness settings, sweeps the frozen one.
    const survivor = broker.worker({
      queues: [queue],
      concurrency: 8,
      staleAfterMs: 1_000,
      heartbeatIntervalMs: 250,
    })
    await survivor.start()
    await until(
      async () => {
        const [row] = await db.sql`select count(*)::int as n from iddqueue.messages
          where worker_id = ${frozen.id} and state = 'consumed'`
        return row?.n === 0
      },
      30_000,
      "the frozen worker's messages to be queued again",
    )
    await until(
      () => ran.size === count - frozen.finished.size || ran.size === count,
      60_000,
      'the survivor to run the rest',
    )
    frozen.kill('SIGCONT')
    await until(
      () => frozen.logs.some((l) => /presumed dead/.test(l.text)),
      30_000,
      'the thawed worker to notice it was presumed dead',
    )
    await broker.join({ queues: [queue], timeoutMs: 30_000 })
    const rows = await db.sql`select state, count(*)::int as n from iddqueue.messages
      where queue = ${queue} group by state`
    expect(rows).toEqual([{ state: 'done', n: count }])
    // Run twice: only messages that crash recovery took back from the frozen worker.
    const both = new Set([...frozen.started].filter((i) => ran.has(i)))
    const ids =
      await db.sql`select id, (args->>0)::int as i from iddqueue.messages where queue = ${queue}`
    const twiceNotRecovered = ids.filter((r) => both.has(r.i) && !recovered.has(r.id))
    expect(twiceNotRecovered).toEqual([])
    expect(recovered.size).toBeGreaterThan(0)
    const twice = both.size
    const warning = frozen.logs.find((l) => /presumed dead/.test(l.text))!
    expect(warning.text).toMatch(/no heartbeat for \d+ ms while PostgreSQL answered/)
    expect(frozen.alive).toBe(true)
    await survivor.stop()
    expect(await frozen.stop()).toBe(0)
    console.info(
      `chaos frozen: ${held?.n} held when frozen, requeued and run elsewhere; ${twice} ran in both processes; the thawed worker logged "${warning.text.slice(0, 80)}…" and stopped cleanly`,
    )
  }, 120_000)
})
