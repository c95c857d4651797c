import { namespace } from '@iddqueue/schema'
import { describe, expect, it } from 'vitest'
import { claimSql, nextEtaSql } from '../src/sql/claim.js'
import { explainRolledBack, nodes, type PlanNode, rowsRead } from './explain-plan.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()
const ns = namespace()

/** EXPLAIN ANALYZE of one claim, rolled back so the backlog stays as it is. */
function explainClaim(queues: readonly string[], limit: number): Promise<PlanNode[]> {
  return explainRolledBack(db.sql, claimSql(ns, queues.length), [
    queues,
    limit,
    crypto.randomUUID(),
  ])
}

async function fill(queue: string, count: number, priority: number, delayMs = 0): Promise<void> {
  await db.sql`insert into iddqueue.messages (id, queue, actor, priority, eta)
    select gen_random_uuid(), ${queue}, 'job', ${priority}, now() + ${delayMs} * interval '1 millisecond'
      from generate_series(1, ${count})`
}

describe('the claim plan', () => {
  it('over three queues: one ready-index probe per queue, no sort, reads about the batch, not the backlog', async () => {
    const queues = [uniqueQueue('a'), uniqueQueue('b'), uniqueQueue('c')]
    for (const queue of queues) await fill(queue, 3_000, 0)
    await db.sql`analyze iddqueue.messages`
    const plan = await explainClaim(queues, 30)
    expect(plan.filter((n) => n['Node Type'].includes('Sort'))).toEqual([])
    expect(
      plan.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'messages'),
    ).toEqual([])
    expect(
      plan.filter(
        (n) => n['Node Type'] === 'Bitmap Index Scan' && n['Index Name'] !== 'messages_pkey',
      ),
    ).toEqual([])
    const locks = plan.filter((n) => n['Node Type'] === 'LockRows')
    expect(locks).toHaveLength(1)
    const probe = nodes(locks[0]!).find((n) => n['Index Name'] === 'messages_ready')!
    expect(probe['Actual Loops']).toBe(3) // one locked probe per queue
    expect(plan[0]!['Actual Rows']).toBe(30)
    // Counting and locking each read a queue's share (10); levels read one row per queue.
    expect(rowsRead(plan)).toBeLessThan(120)
  })

  it("over several queues: the plan's estimated cost does not grow with the backlog (no JIT compilation)", async () => {
    // The estimate decides JIT: above jit_above_cost (100,000 by default)
    // every claim was compiled (about 30 ms, 6 times the claim's own work).
    // A limit computed in the statement is estimated at a tenth of the scan,
    // so each one is capped by the constant batch.
    const queues = [uniqueQueue('cost'), uniqueQueue('cost')]
    const estimate = async (): Promise<number> => {
      const [row] = await db.sql.unsafe(`explain (format json) ${claimSql(ns, queues.length)}`, [
        queues as string[],
        500,
        crypto.randomUUID(),
      ])
      return (row!['QUERY PLAN'] as { Plan: { 'Total Cost': number } }[])[0]!.Plan['Total Cost']
    }
    for (const queue of queues) await fill(queue, 2_000, 0)
    await db.sql`analyze iddqueue.messages`
    const small = await estimate()
    for (const queue of queues) await fill(queue, 48_000, 0)
    await db.sql`analyze iddqueue.messages`
    const large = await estimate()
    expect(large).toBeLessThan(small * 2) // 25 times the rows; before the cap, 25 times the cost
    expect(large).toBeLessThan(20_000)
    const plan = await explainClaim(queues, 500)
    expect(plan[0]!['Actual Rows']).toBe(500)
  })

  it('over one queue behind a delayed backlog of higher priority: reads the batch, not the delayed rows', async () => {
    const queue = uniqueQueue('delayed')
    await fill(queue, 5_000, 0, 3_600_000)
    await fill(queue, 1_000, 10)
    await db.sql`analyze iddqueue.messages`
    const plan = await explainClaim([queue], 20)
    expect(plan.filter((n) => n['Node Type'].includes('Sort'))).toEqual([])
    expect(plan[0]!['Actual Rows']).toBe(20)
    expect(rowsRead(plan)).toBeLessThan(60)
  })

  it('how long to sleep reads one row per queue and priority level, not the backlog', async () => {
    const queues = [uniqueQueue('eta'), uniqueQueue('eta')]
    await fill(queues[0]!, 4_000, 0, 3_600_000)
    await fill(queues[0]!, 10, 5, 60_000)
    await fill(queues[1]!, 4_000, 3, 120_000)
    await db.sql`analyze iddqueue.messages`
    const plan = await explainRolledBack(db.sql, nextEtaSql(ns), [queues])
    expect(plan.filter((n) => n['Node Type'].includes('Sort'))).toEqual([])
    expect(rowsRead(plan)).toBeLessThan(20)
    const [wait] = await db.sql.unsafe<{ wait_ms: number }[]>(nextEtaSql(ns), [queues])
    expect(wait!.wait_ms).toBeGreaterThan(50_000)
    expect(wait!.wait_ms).toBeLessThanOrEqual(60_000)
  })
})
