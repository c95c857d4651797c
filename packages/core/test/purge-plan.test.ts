import { namespace } from '@iddqueue/schema'
import { describe, expect, it } from 'vitest'
import { purgeMessagesSql } from '../src/sql/purge.js'
import { explainRolledBack, rowsRead } from './explain-plan.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()
const DAY = 86_400_000

/** The rows one purge batch reads from the messages table (EXPLAIN ANALYZE, rolled back). */
async function rowsReadByPurge(olderThanMs: number, batch: number): Promise<number> {
  return rowsRead(
    await explainRolledBack(db.sql, purgeMessagesSql(namespace()), [olderThanMs, batch]),
  )
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
