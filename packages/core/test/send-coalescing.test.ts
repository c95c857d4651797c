import { describe, expect, it } from 'vitest'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

/** The transactions that stored a queue's rows (rows of one statement share their `xmin`). */
async function insertingTransactions(queue: string): Promise<{ rows: number; xmins: number }> {
  const [row] = await db.sql`select count(*)::int as rows, count(distinct xmin::text)::int as xmins
    from iddqueue.messages where queue = ${queue}`
  return row as never
}

describe('sends the broker commits itself, many at once (decision 0010)', () => {
  it('share insert statements once four are in flight; a lone send is inserted at once', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('coalesce')
    const echo = broker.actor('echo', (_n: number) => {}, { queue })
    await echo.send(0)
    expect(await insertingTransactions(queue)).toEqual({ rows: 1, xmins: 1 })
    const sent = await Promise.all(Array.from({ length: 40 }, (_, i) => echo.send(i + 1)))
    expect(new Set(sent.map((message) => message.id)).size).toBe(40)
    const { rows, xmins } = await insertingTransactions(queue)
    expect(rows).toBe(41)
    // The first four sends went alone; the others waited and shared a statement.
    expect(xmins).toBeLessThanOrEqual(1 + 4 + 4)
    const args = await db.sql`select args from iddqueue.messages where queue = ${queue} order by id`
    expect(args.map((row) => (row.args as [number])[0]).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 41 }, (_, i) => i),
    )
  })

  it("one send's failure in a shared statement is that send's alone: the others are stored", async () => {
    const broker = db.broker()
    const queue = uniqueQueue('coalesce')
    const echo = broker.actor('echo', (_n: number) => {}, { queue })
    const twice = echo.message(-1)
    // The same message twice among others: its second insert fails the
    // statement it shares (the id exists), and is sent again on its own.
    const sent = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => echo.send(i)),
      broker.enqueue(twice),
      ...Array.from({ length: 20 }, (_, i) => echo.send(100 + i)),
      broker.enqueue(twice),
    ])
    expect(sent).toHaveLength(42)
    const { rows } = await insertingTransactions(queue)
    expect(rows).toBe(41)
    const [stored] =
      await db.sql`select count(*)::int as n from iddqueue.messages where id = ${twice.id}`
    expect(stored?.n).toBe(1)
  })

  it('a send PostgreSQL refuses fails alone: the sends that shared its statement are stored', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('coalesce')
    const echo = broker.actor('echo', (_n: number) => {}, { queue })
    await db.sql.unsafe(`create or replace function refuse_666() returns trigger language plpgsql as $$
      begin raise exception 'no 666 here'; end $$`)
    await db.sql.unsafe(`create trigger refuse_666 before insert on iddqueue.messages
      for each row when (new.args = '[666]'::jsonb) execute function refuse_666()`)
    try {
      const outcomes = await Promise.allSettled(
        Array.from({ length: 40 }, (_, i) => echo.send(i === 25 ? 666 : i)),
      )
      const refused = outcomes.flatMap((outcome, i) => (outcome.status === 'rejected' ? [i] : []))
      expect(refused).toEqual([25])
      expect(String((outcomes[25] as PromiseRejectedResult).reason)).toContain('no 666 here')
      expect((await insertingTransactions(queue)).rows).toBe(39)
    } finally {
      await db.sql.unsafe('drop trigger refuse_666 on iddqueue.messages')
    }
  })
})
