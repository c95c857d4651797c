import { type ActorContext, attemptHistory } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

interface AttemptPage {
  items: { id: string; messageId: string; status: string; errorType: string | null }[]
  nextAfter: string | null
}

describe('iddqueue history', () => {
  it("lists a message's attempts a page at a time, then purges old ones", async () => {
    const broker = db.broker({ plugins: [attemptHistory()] })
    const queue = uniqueQueue('history')
    const flaky = broker.actor(
      'flaky',
      (ctx: ActorContext) => {
        if (ctx.attempt < 3) throw new RangeError(`attempt ${ctx.attempt} failed`)
      },
      { queue, maxRetries: 5, minBackoffMs: 1, maxBackoffMs: 5 },
    )
    const message = await flaky.send()
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()

    const first = await db.cli('history', 'list', message.id, '--limit', '2')
    expect(first).toMatchObject({ code: 0, stderr: '' })
    const page = first.json<AttemptPage>()
    expect(page.items.map((a) => [a.messageId, a.status, a.errorType])).toEqual([
      [message.id, 'failed', 'RangeError'],
      [message.id, 'failed', 'RangeError'],
    ])
    expect(page.nextAfter).toBe(page.items[1]!.id)
    const rest = await db.cli('history', 'list', message.id, '--after', page.nextAfter!)
    expect(rest.json<AttemptPage>()).toMatchObject({
      items: [{ status: 'successful', errorType: null }],
      nextAfter: null,
    })

    const day = String(24 * 3600 * 1000)
    const none = await db.cli('history', 'purge', '--older-than-ms', day)
    expect(none).toMatchObject({ code: 0, stdout: 'purged 0 attempts\n' })
    await db.sql`update iddqueue.attempts set started_at = now() - interval '2 days'
      where message_id = ${message.id}`
    const purged = await db.cli('history', 'purge', '--older-than-ms', day, '--json')
    expect(purged.json()).toEqual({ attempts: 3 })
    expect((await db.cli('history', 'list', message.id)).json()).toEqual({
      items: [],
      nextAfter: null,
    })
  })

  it('exits 2 on a missing retention, a malformed id or cursor, deleting nothing', async () => {
    const id = crypto.randomUUID()
    await db.sql`insert into iddqueue.attempts (id, message_id, actor, queue, started_at)
      values (${crypto.randomUUID()}, ${id}, 'old', 'q', now() - interval '2 days')`
    const cases: [string[], string][] = [
      [['history', 'purge'], 'iddqueue history purge: missing --older-than-ms N'],
      [['history', 'purge', '--older-than-ms', '1 day'], 'invalid --older-than-ms "1 day"'],
      [['history', 'list'], 'iddqueue history list: missing ID'],
      [['history', 'list', 'x'], 'invalid message id "x": expected a UUID'],
      [['history', 'list', id, '--after', 'y'], 'invalid --after "y": expected a UUID'],
      [
        ['history', 'list', id, '--limit', '1001'],
        'Invalid limit 1001: expected an integer from 1 to 1000',
      ],
      [['history'], 'iddqueue history: expected "list" or "purge", got ""'],
      [['history', 'drop'], 'iddqueue history: expected "list" or "purge", got "drop"'],
    ]
    for (const [argv, text] of cases) {
      const run = await db.cli(...argv)
      expect(run.code, argv.join(' ')).toBe(2)
      expect(run.stderr).toContain(text)
      expect(run.stdout).toBe('')
    }
    const [row] =
      await db.sql`select count(*)::int as n from iddqueue.attempts where message_id = ${id}`
    expect(row?.n).toBe(1)
  })
})
