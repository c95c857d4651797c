import { describe, expect, it } from 'vitest'
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
