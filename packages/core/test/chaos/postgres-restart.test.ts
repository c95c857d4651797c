import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Broker, BrokerConnectionError, createBroker } from '../../src/index.js'
import { sleep, until } from '../helpers.js'
import { type OwnedPostgres, ownPostgres } from './harness/owned-postgres.js'
import { enqueueAll, type SendRecord, sendContinuously } from './harness/producers.js'
import { recordLogs } from './harness/record-logs.js'

// PostgreSQL restarts and outages while a worker lives and producers send,
// on an embedded server this file owns (never the shared one).

let pg: OwnedPostgres
beforeAll(async () => {
  pg = await ownPostgres()
}, 120_000)
afterAll(() => pg?.stop())

const SEND_TIMEOUT_MS = 3_000
/** Spec: a worker resumes within 1 s of PostgreSQL answering (CHAOS_RESUME_MS to relax on a slow machine). */
const RESUME_MS = Number(process.env.CHAOS_RESUME_MS ?? 1_000)

async function stateCounts(queue: string): Promise<Record<string, number>> {
  const rows = await pg.sql`select state, count(*)::int as n from iddqueue.messages
    where queue = ${queue} group by state`
  return Object.fromEntries(rows.map((r) => [r.state, r.n]))
}

describe('PostgreSQL restarted fast, crashed (immediate) and down for 10 s during a run', () => {
  it('loses nothing, leaves nothing consumed, keeps the worker, resumes it promptly and bounds every send', async () => {
    const queue = `restart_${crypto.randomUUID().slice(0, 8)}`
    const logs = recordLogs()
    const broker: Broker = createBroker({
      url: pg.url,
      sendTimeoutMs: SEND_TIMEOUT_MS,
      logger: logs.logger,
    })
    let lastStartAt = 0
    const ran = new Map<number, number>()
    const work = broker.actor(
      'work',
      async (i: number) => {
        lastStartAt = performance.now()
        ran.set(i, (ran.get(i) ?? 0) + 1)
      },
      { queue },
    )
    const worker = broker.worker({ concurrency: 16, pollIntervalMs: 5_000 })
    let workerErrors = 0
    broker.on('worker:error', () => workerErrors++)
    await worker.start()
    const initial = 20_000
    await enqueueAll(
      initial,
      (i) => work.message(i),
      (m) => broker.enqueueMany(m),
    )
    const sends: SendRecord[] = []
    const producers = sendContinuously(4, (i) => work.send(initial + i), sends)

    const resumes: number[] = []
    const faults: ['fast' | 'immediate', number, number][] = [
      ['fast', 300, 2_000],
      ['immediate', 300, 7_000],
      ['immediate', 10_000, 12_000],
    ]
    for (const [mode, downMs, after] of faults) {
      // Mid-drain: outcomes in flight when the server goes.
      await until(
        () => ran.size > after && performance.now() - lastStartAt < 20,
        60_000,
        'the worker to be busy',
      )
      await pg.restart(mode, downMs)
      const backAt = performance.now()
      // Enough is queued (the producers keep sending) for the worker to start a message at once.
      await until(
        () => lastStartAt > backAt,
        30_000,
        'the worker to start a message after the restart',
      )
      resumes.push(lastStartAt - backAt)
      // Pacing, not proof: faults further apart than one reconnection's
      // LISTEN answers (see SAME_RECONNECTION_MS in listener.ts).
      await sleep(1_500)
    }
    await producers.stop()
    // A send that failed may still have been stored (BrokerConnectionError
    // says so): at least every acknowledged one, at most every attempted one.
    const sent = initial + sends.filter((s) => s.ok).length
    const attempted = initial + sends.length

    // Every message ends done: none stays consumed by the live worker.
    const settled = async () => {
      const counts = await stateCounts(queue)
      return Object.keys(counts).length === 1 && (counts.done ?? 0) >= sent
    }
    await until(settled, 60_000, `all ${sent} messages done`).catch(async (error) => {
      throw new Error(
        `${(error as Error).message}; worker ${worker.id}: ${JSON.stringify(await stateCounts(queue))}`,
      )
    })
    const { done } = await stateCounts(queue)
    expect(done).toBeGreaterThanOrEqual(sent)
    expect(done).toBeLessThanOrEqual(attempted)
    expect(worker.state).toBe('running')

    const failed = sends.filter((s) => !s.ok)
    for (const s of failed)
      expect(BrokerConnectionError.isInstance(s.error), String(s.error)).toBe(true)
    const longest = Math.max(...sends.map((s) => s.ms))
    // The deadline, plus the event loop's lateness on a loaded machine.
    expect(longest).toBeLessThan(SEND_TIMEOUT_MS + 1_000)
    console.info(
      `chaos restart: ${sent} messages, ${failed.length}/${sends.length} sends failed (all BrokerConnectionError), longest send ${Math.round(longest)} ms, ` +
        `resumed ${resumes.map((ms) => Math.round(ms)).join('/')} ms after each restart, ${[...ran.values()].filter((n) => n > 1).length} ran twice, ${workerErrors} worker errors`,
    )
    for (const ms of resumes) expect(ms).toBeLessThan(RESUME_MS)
    // One rescan per reconnection of the LISTEN connection, not one per channel
    // (five channels: fifteen). A loaded machine may see a second reconnection
    // within one fault (the first attempt lands while the server still recovers).
    const rescans = logs.count(/listen connection re-established/)
    expect(rescans).toBeGreaterThanOrEqual(faults.length)
    expect(rescans).toBeLessThanOrEqual(2 * faults.length)

    await worker.stop()
    await broker.close()
  }, 240_000)
})
