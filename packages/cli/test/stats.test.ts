import { describe, expect, it } from 'vitest'
import { rejectMessages, setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

const EMPTY = {
  queued: 0,
  consumed: 0,
  done: 0,
  rejected: 0,
  cancelled: 0,
  ready: 0,
  scheduled: 0,
  oldestReadyMs: 0,
  doneLastMinute: 0,
  doneLastHour: 0,
  oldestReadySeconds: 0,
}

describe('iddqueue stats', () => {
  it('counts messages by queue and state, as JSON and as a table', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('stats')
    const other = uniqueQueue('zother')
    await rejectMessages(broker, queue)
    const job = broker.actor('counted', () => {}, { queue })
    const [old] = await broker.enqueueMany([
      job.message(),
      job.message(),
      { message: job.message(), delayMs: 60_000 },
    ])
    const cancelled = await job.sendWithOptions({ args: [], delayMs: 60_000 })
    await broker.cancel(cancelled.id)
    await broker.actor('elsewhere', () => {}, { queue: other }).send()
    // One ready message has waited two minutes.
    await db.sql`update iddqueue.messages set eta = now() - interval '2 minutes',
      updated_at = now() - interval '2 minutes' where id = ${old!.id}`

    const one = await db.cli('stats', '--queue', queue, '--json')
    expect(one).toMatchObject({ code: 0, stderr: '' })
    const [stats] = one.json<{ queues: (typeof EMPTY & { queue: string })[] }>().queues
    expect(stats).toMatchObject({
      queue,
      queued: 3,
      consumed: 0,
      done: 0,
      rejected: 1,
      cancelled: 1,
      ready: 2,
      scheduled: 1,
    })
    expect(stats!.oldestReadySeconds).toBeGreaterThanOrEqual(120)
    expect(stats!.oldestReadySeconds).toBeLessThan(180)

    const all = (await db.cli('stats', '--json')).json<{ queues: { queue: string }[] }>()
    expect(all.queues.map((q) => q.queue)).toEqual([queue, other])

    const table = await db.cli('stats')
    expect(table.code).toBe(0)
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(
      /^queue\s+queued\s+consumed\s+done\s+rejected\s+cancelled\s+ready\s+scheduled\s+oldest ready$/,
    )
    expect(lines[1]).toMatch(
      new RegExp(`^${queue}\\s+3\\s+0\\s+0\\s+1\\s+1\\s+2\\s+1\\s+2m \\d+s$`),
    )
    expect(lines[2]).toMatch(new RegExp(`^${other}\\s+1\\s+0\\s+0\\s+0\\s+0\\s+1\\s+0\\s+\\d+s$`))
    expect(lines[3]).toMatch(/^total\s+4\s+0\s+0\s+1\s+1\s+3\s+1\s+2m \d+s$/)
  })

  it('reads the fast snapshot with --estimate (exact on a table this small)', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('estimate')
    await rejectMessages(broker, queue)
    await broker.actor('later', () => {}, { queue }).sendWithOptions({ args: [], delayMs: 60_000 })
    const exact = await db.cli('stats', '--queue', queue, '--json')
    const fast = await db.cli('stats', '--queue', queue, '--json', '--estimate')
    expect(fast).toMatchObject({ code: 0, stderr: '' })
    const strip = (run: typeof fast) =>
      run
        .json<{ queues: Record<string, unknown>[] }>()
        .queues.map(({ oldestReadyMs: _ms, oldestReadySeconds: _s, ...rest }) => rest)
    expect(strip(fast)).toEqual(strip(exact))
    expect(strip(fast)).toEqual([
      expect.objectContaining({ queue, rejected: 1, queued: 1, scheduled: 1 }),
    ])
    const table = await db.cli('stats', '--queue', queue, '--estimate')
    expect(table.stdout.split('\n')[1]).toMatch(
      new RegExp(`^${queue}\\s+1\\s+0\\s+0\\s+1\\s+0\\s+0\\s+1\\s+0s$`),
    )
  })

  it('reports zeros for a queue with no messages, and refuses an invalid one', async () => {
    const queue = uniqueQueue('empty')
    const run = await db.cli('stats', '--queue', queue, '--json')
    expect(run.json()).toEqual({ queues: [{ queue, ...EMPTY }] })
    const table = await db.cli('stats', '--queue', queue)
    expect(table.stdout.split('\n')[1]).toMatch(new RegExp(`^${queue}(\\s+0){7}\\s+0s$`))

    const bad = await db.cli('stats', '--queue', 'no good')
    expect(bad).toMatchObject({ code: 2, stdout: '' })
    expect(bad.stderr).toContain('iddqueue stats: Invalid queue name "no good"')
  })

  it('names the missing tables when the namespace was never migrated', async () => {
    const run = await db.cli('--schema', 'never_migrated', 'stats')
    expect(run).toMatchObject({ code: 1, stdout: '' })
    expect(run.stderr).toBe(
      'iddqueue stats: the iddqueue tables do not exist in schema "never_migrated"; run `iddqueue --schema never_migrated migrate` first\n',
    )
  })
})
