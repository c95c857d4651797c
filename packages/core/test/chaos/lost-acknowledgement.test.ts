import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBroker } from '../../src/index.js'
import { until } from '../helpers.js'
import { type OwnedPostgres, ownPostgres } from './harness/owned-postgres.js'

// Defect 1 of issue 12: a worker's acknowledgements commit asynchronously
// (decision 0007), so a PostgreSQL crash can lose one while the worker
// lives on, believing it recorded. Nothing may stay `consumed` for it.

let pg: OwnedPostgres
beforeAll(async () => {
  pg = await ownPostgres()
}, 120_000)
afterAll(() => pg?.stop())

describe('PostgreSQL crashes (immediate restart) after a live worker acknowledged messages', () => {
  it('the lost acknowledgements do not leave them consumed: they run again and end done', async () => {
    const queue = `lost_ack_${crypto.randomUUID().slice(0, 8)}`
    const broker = createBroker({
      url: pg.url,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    })
    const count = 20
    const runs = new Map<number, number>()
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const work = broker.actor(
      'work',
      async (i: number) => {
        runs.set(i, (runs.get(i) ?? 0) + 1)
        if (runs.get(i) === 1) await gate
      },
      { queue },
    )
    const other = broker.actor('flush', () => {}, { queue: `${queue}_nobody` })
    const worker = broker.worker({ queues: [queue], concurrency: count })
    await worker.start()
    await broker.enqueueMany(Array.from({ length: count }, (_, i) => work.message(i)))
    await until(() => runs.size === count, 30_000, 'every handler to start')
    // A synchronous commit flushes the WAL so far: the claims are durable,
    // and only the acknowledgements that follow are at risk.
    await other.send()
    release()
    await until(
      () => worker.stats.running === 0 && worker.stats.settling === 0,
      30_000,
      'the outcomes to be written',
    )
    const [before] = await pg.sql`select count(*)::int as n from iddqueue.messages
      where queue = ${queue} and state = 'done'`
    expect(before?.n).toBe(count)

    await pg.restart('immediate')
    const [after] = await pg.sql`select count(*)::int as n from iddqueue.messages
      where queue = ${queue} and state = 'consumed' and worker_id = ${worker.id}`
    // The crash lost acknowledgements: the worker, alive and registered, is
    // said to hold messages it finished. (If none was lost, the test proves nothing.)
    expect(after?.n, 'acknowledgements lost by the crash').toBeGreaterThan(0)

    await until(
      async () => {
        const [row] = await pg.sql`select count(*)::int as n from iddqueue.messages
          where queue = ${queue} and state = 'done'`
        return row?.n === count
      },
      // Within the recovery time (staleAfterMs plus a heartbeat) on a loaded machine.
      20_000,
      'every message to be done again',
    )
    expect(worker.state).toBe('running')
    await worker.stop()
    await broker.close()
  }, 120_000)
})
