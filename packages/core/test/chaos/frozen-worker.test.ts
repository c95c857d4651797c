import { describe, expect, it } from 'vitest'
import { setupDatabase, uniqueQueue, until } from '../helpers.js'
import { enqueueAll } from './harness/producers.js'
import { WorkerProcess } from './harness/worker-process.js'

const db = setupDatabase()
/** Either of the heartbeat's two presumed-dead lines (not the refused-outcomes warning). */
const PRESUMED_DEAD = /^worker (lost PostgreSQL|was presumed dead)/

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
    // What it had finished when it thawed: it had been swept meanwhile.
    const finishedWhenFrozen = new Set(frozen.finished)
    frozen.kill('SIGCONT')
    await until(
      () => frozen.logs.some((l) => PRESUMED_DEAD.test(l.text)),
      30_000,
      'the thawed worker to notice it was presumed dead',
    )
    await broker.join({ queues: [queue], timeoutMs: 30_000 })
    await until(() => frozen.inFlight.length === 0, 30_000, 'the thawed handlers to end')
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
    // Its refused outcomes: exactly those of the messages it finished whose
    // outcome in the table is another worker's. Waited for (the thawed
    // worker writes them after its handlers end), then checked for extras.
    const index = new Map(ids.map((r) => [r.id as string, r.i as number]))
    const owners = await db.sql`select (args->>0)::int as i from iddqueue.messages
      where queue = ${queue} and worker_id is distinct from ${frozen.id}`
    const byOthers = new Set(owners.map((r) => r.i as number))
    const expected = [...frozen.finished].filter((i) => byOthers.has(i)).sort((a, b) => a - b)
    const refusedRuns = () =>
      frozen.refused
        .filter((r) => r.outcome !== 'requeue')
        .map((r) => index.get(r.id)!)
        .sort((a, b) => a - b)
    await until(
      () => refusedRuns().length >= expected.length,
      30_000,
      'the thawed worker to report its refused outcomes',
    )
    const thawedFinished = [...frozen.finished].filter((i) => !finishedWhenFrozen.has(i))
    expect(thawedFinished.length).toBeGreaterThan(0)
    const warning = frozen.logs.find((l) => PRESUMED_DEAD.test(l.text))!
    expect(warning.text).toMatch(/no heartbeat for \d+ ms while PostgreSQL answered/)
    expect(frozen.alive).toBe(true)
    await survivor.stop()
    expect(await frozen.stop()).toBe(0)
    const refused = refusedRuns()
    expect(refused).toEqual(expected)
    // Every handler that ended after the thaw had its outcome refused; any
    // other refusal is of a handler that ended just before the freeze, its
    // outcome not yet written when SIGSTOP landed.
    expect(refused).toEqual(expect.arrayContaining(thawedFinished))
    const caughtUnwritten = refused.filter((i) => !thawedFinished.includes(i))
    expect(caughtUnwritten.every((i) => finishedWhenFrozen.has(i))).toBe(true)
    expect(refused).toHaveLength(thawedFinished.length + caughtUnwritten.length)
    const refusedWarnings = frozen.logs.filter((l) => /message outcomes refused/.test(l.text))
    expect(refusedWarnings.length).toBeGreaterThan(0)
    console.info(
      `chaos frozen: ${held?.n} held when frozen, requeued and run elsewhere; ${twice} ran in both processes; the thawed worker logged "${warning.text.slice(0, 80)}…", finished ${thawedFinished.length} handlers after the thaw and had ${refused.length} outcomes refused (${caughtUnwritten.length} of handlers that ended just before the freeze) in ${refusedWarnings.length} warnings ("${refusedWarnings[0]?.text.slice(0, 40)}…"), and stopped cleanly`,
    )
  }, 120_000)
})
