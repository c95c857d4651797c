import { uuid7 } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { rejectMessages, setupDatabase, states, uniqueQueue } from './helpers.js'

const db = setupDatabase()

interface Page {
  items: { id: string; queue: string; actor: string; failure: { type: string; message: string } }[]
  nextAfter: string | null
}

describe('iddqueue failed list', () => {
  it('lists rejected messages of a queue as JSON, a page at a time', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('failed')
    const other = uniqueQueue('other')
    const ids = await rejectMessages(broker, queue, 3)
    await rejectMessages(broker, other, 1)

    const first = await db.cli('failed', 'list', '--queue', queue, '--limit', '2')
    expect(first.code).toBe(0)
    expect(first.stderr).toBe('')
    const page = first.json<Page>()
    expect(page.items.map((item) => item.id)).toEqual(ids.slice(0, 2))
    expect(page.items[0]).toMatchObject({
      queue,
      actor: `fails_${queue}`,
      retries: 0,
      failure: { type: 'TypeError', message: 'boom 0', attempt: 1 },
    })
    expect(page.items[0]).not.toHaveProperty('args')
    expect(page.items[0]!.failure).not.toHaveProperty('stack')
    expect(page.nextAfter).toBe(ids[1])

    const next = await db.cli(
      'failed',
      'list',
      '--queue',
      queue,
      '--limit',
      '2',
      '--after',
      ids[1]!,
    )
    expect(next.json<Page>()).toMatchObject({ items: [{ id: ids[2] }], nextAfter: null })

    const byActor = await db.cli('failed', 'list', '--actor', `fails_${other}`)
    expect(byActor.json<Page>().items.map((item) => item.queue)).toEqual([other])
  })

  it('refuses a bad limit or cursor with exit 2, naming it', async () => {
    const cases: [string[], string][] = [
      [['--limit', 'ten'], 'invalid --limit "ten": expected a whole number'],
      [['--limit', '0'], 'Invalid limit 0: expected an integer from 1 to 1000'],
      [['--after', 'nope'], 'invalid --after "nope": expected a UUID'],
      [['--queue', 'no good'], 'Invalid queue name "no good"'],
      [['--queue'], "Option '--queue <value>' argument missing"],
    ]
    for (const [args, text] of cases) {
      const run = await db.cli('failed', 'list', ...args)
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr).toContain(`iddqueue failed list: ${text}`)
      expect(run.stdout).toBe('')
    }
  })
})

describe('iddqueue failed show', () => {
  it('shows a rejected message, its payload and stack only with --payload', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('show')
    const [id] = await rejectMessages(broker, queue)

    const plain = await db.cli('failed', 'show', id!)
    expect(plain.code).toBe(0)
    const shown = plain.json()
    expect(shown).toMatchObject({ id, queue, priority: 0, failure: { type: 'TypeError' } })
    expect(shown).not.toHaveProperty('args')
    expect(shown.failure).not.toHaveProperty('stack')

    const full = (await db.cli('failed', 'show', id!, '--payload')).json()
    expect(full).toMatchObject({ id, args: [0], options: {} })
    expect((full.failure as { stack: string }).stack).toContain('TypeError: boom 0')
  })

  it('exits 3 for a missing message and 4 for one that is not rejected', async () => {
    const missing = uuid7()
    const none = await db.cli('failed', 'show', missing)
    expect(none.code).toBe(3)
    expect(none.json()).toEqual({ id: missing, status: 'missing' })
    expect(none.stderr).toBe(`iddqueue failed show: no message ${missing}\n`)

    const broker = db.broker()
    const queue = uniqueQueue('queued')
    const sent = await broker.actor('waits', () => {}, { queue }).send()
    const queued = await db.cli('failed', 'show', sent.id)
    expect(queued.code).toBe(4)
    expect(queued.json()).toEqual({ id: sent.id, status: 'not-rejected', state: 'queued' })
    expect(queued.stderr).toBe(`iddqueue failed show: message ${sent.id} is queued, not rejected\n`)
  })

  it('exits 2 on a malformed or missing id', async () => {
    const bad = await db.cli('failed', 'show', '1234')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('iddqueue failed show: invalid message id "1234": expected a UUID')
    const missing = await db.cli('failed', 'show')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('iddqueue failed show: missing ID')
  })
})

describe('iddqueue retry', () => {
  it('queues a rejected message again, then refuses a second retry with exit 4', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('retry')
    const [id, untouched] = await rejectMessages(broker, queue, 2)

    const run = await db.cli('retry', id!)
    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(run.json()).toEqual({ id, status: 'retried' })
    const [row] =
      await db.sql`select state, retries, failure, args from iddqueue.messages where id = ${id!}`
    expect(row).toEqual({ state: 'queued', retries: 0, failure: null, args: [0] })
    expect(await states(db.sql, queue)).toEqual({ queued: 1, rejected: 1 })

    const again = await db.cli('retry', id!)
    expect(again.code).toBe(4)
    expect(again.json()).toEqual({ id, status: 'not-rejected' })
    expect(again.stderr).toBe(`iddqueue retry: message ${id} is not rejected; nothing changed\n`)
    const [other] = await db.sql`select state from iddqueue.messages where id = ${untouched!}`
    expect(other?.state).toBe('rejected')
  })

  it('exits 3 for a missing message and 5 while a worker holds the row', async () => {
    const missing = uuid7()
    const none = await db.cli('retry', missing)
    expect(none.code).toBe(3)
    expect(none.json()).toEqual({ id: missing, status: 'missing' })
    expect(none.stderr).toBe(`iddqueue retry: no message ${missing}\n`)

    const broker = db.broker()
    const queue = uniqueQueue('busy')
    const [id] = await rejectMessages(broker, queue)
    // Hold the row as a worker recording the rejection would.
    let release!: () => void
    let locked!: () => void
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve
    })
    const holding = db.sql.begin(async (tx) => {
      await tx`select id from iddqueue.messages where id = ${id!} for update`
      locked()
      await new Promise<void>((resolve) => {
        release = resolve
      })
    })
    await isLocked
    const busy = await db.cli('retry', id!)
    release()
    await holding
    expect(busy.code).toBe(5)
    expect(busy.json()).toEqual({ id, status: 'busy' })
    expect(busy.stderr).toContain('a worker is still recording the rejection')
    expect(await states(db.sql, queue)).toEqual({ rejected: 1 })
  })

  it('exits 2 on a malformed id or an extra argument, changing nothing', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('bad')
    const [id] = await rejectMessages(broker, queue)
    const bad = await db.cli('retry', 'not-a-uuid')
    expect(bad).toMatchObject({ code: 2, stdout: '' })
    expect(bad.stderr).toContain('iddqueue retry: invalid message id "not-a-uuid": expected a UUID')
    const extra = await db.cli('retry', id!, id!)
    expect(extra.code).toBe(2)
    expect(extra.stderr).toContain(`iddqueue retry: unexpected argument "${id}"`)
    expect(await states(db.sql, queue)).toEqual({ rejected: 1 })
  })
})
