import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { setupDatabase, sleep, until } from '../helpers.js'

const db = setupDatabase()
const child = fileURLToPath(new URL('../fixtures/worker-child.mjs', import.meta.url))

describe('a worker killed with SIGKILL', () => {
  it('loses nothing: its messages are queued again within 10 s, keep their retry budget, and complete elsewhere', async () => {
    const queue = 'crash'
    const broker = db.broker()
    const ranHere = new Set<number>()
    const slow = broker.actor(
      'slow',
      async (i: number) => {
        ranHere.add(i)
        await sleep(5)
      },
      { queue },
    )
    await broker.enqueueMany(Array.from({ length: 60 }, (_, i) => slow.message(i)))

    const proc = fork(child, [db.url, queue, '4', '20'], { stdio: 'ignore' })
    const startedThere = new Set<number>()
    let childId = ''
    proc.on('message', (m: { ready?: string; started?: number }) => {
      if (m.ready) childId = m.ready
      if (m.started !== undefined) startedThere.add(m.started)
    })
    await until(() => childId !== '' && startedThere.size >= 4, 15_000, 'the child to run handlers')
    const [held] =
      await db.sql`select count(*)::int as n from iddqueue.messages where worker_id = ${childId} and state = 'consumed'`
    expect(held?.n).toBeGreaterThanOrEqual(20)

    // A surviving worker in this process, with default liveness settings.
    const survivor = broker.worker({ queues: [queue], concurrency: 4 })
    proc.kill('SIGKILL')
    const killedAt = Date.now()
    // What the child held when it died: nothing changes these rows until recovery.
    const heldAtDeath = (
      await db.sql`select args->>0 as i from iddqueue.messages where worker_id = ${childId} and state = 'consumed'`
    ).map((row) => Number(row.i))
    await survivor.start()
    await until(
      async () => {
        const [row] =
          await db.sql`select count(*)::int as n from iddqueue.messages where worker_id = ${childId} and state = 'consumed'`
        return row?.n === 0
      },
      15_000,
      "the dead worker's messages to be recovered",
    )
    expect(Date.now() - killedAt).toBeLessThan(10_000)
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await survivor.stop()

    const rows =
      await db.sql`select state, retries, attempts from iddqueue.messages where queue = ${queue}`
    expect(rows).toHaveLength(60)
    expect(rows.every((r) => r.state === 'done' && r.retries === 0)).toBe(true)
    // Everything the child held when it died (started or only claimed) ran again here.
    expect(heldAtDeath.length).toBeGreaterThan(0)
    expect(heldAtDeath.filter((i) => !ranHere.has(i))).toEqual([])
    expect(rows.filter((r) => r.attempts >= 2).length).toBeGreaterThanOrEqual(held!.n)
    const [gone] =
      await db.sql`select count(*)::int as n from iddqueue.workers where id = ${childId}`
    expect(gone?.n).toBe(0)
  }, 60_000)
})
