import { namespace } from '@iddqueue/schema'
import { describe, expect, it } from 'vitest'
import { purgeMessagesSql } from '../src/sql/purge.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()
const DAY = 86_400_000

interface PlanNode {
  readonly 'Node Type': string
  readonly 'Relation Name'?: string
  readonly 'Index Name'?: string
  readonly 'Actual Rows': number
  readonly 'Actual Loops': number
  readonly Plans?: readonly PlanNode[]
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)]
}

/** EXPLAIN ANALYZE of one purge batch, rolled back; the rows its scans read from the messages table. */
async function rowsReadByPurge(olderThanMs: number, batch: number): Promise<number> {
  let plan: PlanNode | undefined
  await db.sql
    .begin(async (tx) => {
      const [row] = await tx.unsafe(
        `explain (analyze, format json) ${purgeMessagesSql(namespace())}`,
        [olderThanMs, batch],
      )
      plan = (row!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan
      throw new Error('rollback')
    })
    .catch((error: Error) => {
      if (error.message !== 'rollback') throw error
    })
  return nodes(plan!)
    .filter((n) => n['Relation Name'] === 'messages' && n['Node Type'] !== 'ModifyTable')
    .filter((n) => n['Index Name'] !== 'messages_pkey')
    .reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0)
}

async function fill(state: string, count: number, ageDays: number): Promise<void> {
  await db.sql`insert into iddqueue.messages (id, queue, actor, state, updated_at)
    select gen_random_uuid(), ${uniqueQueue('purge')}, 'job', ${state}, now() - ${ageDays} * interval '1 day'
      from generate_series(1, ${count})`
}

describe('the purge plan', () => {
  it('reads the rows past the retention through the finish-time indexes, not the retained table', async () => {
    // Old rows first in the heap: a scan with a limit would read them and then the rest.
    await fill('done', 300, 40)
    await fill('rejected', 100, 40)
    await fill('cancelled', 50, 40)
    await fill('done', 20_000, 1)
    await fill('cancelled', 2_000, 1)
    await db.sql`analyze iddqueue.messages`
    // 450 to delete: it reads about them, not the 22,450 rows.
    const read = await rowsReadByPurge(30 * DAY, 5_000)
    expect(read).toBeGreaterThanOrEqual(450)
    expect(read).toBeLessThan(1_000)
    // Nothing past a longer retention: two index probes read nothing.
    expect(await rowsReadByPurge(60 * DAY, 5_000)).toBe(0)
  })
})
