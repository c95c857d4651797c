import { uuid7 } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { setupDatabase, states, uniqueQueue } from './helpers.js'

const db = setupDatabase()

describe('iddqueue show', () => {
  it('prints a message in any state, exit 3 when missing', async () => {
    const broker = db.broker()
    const job = broker.actor('job', (_n: number) => {}, { queue: uniqueQueue('show') })
    const message = await job.sendWithOptions({ args: [7], delayMs: 60_000 })
    const shown = await db.cli('show', message.id)
    expect(shown).toMatchObject({ code: 0, stderr: '' })
    expect(shown.json()).toMatchObject({
      id: message.id,
      state: 'queued',
      attempts: 0,
      progress: null,
    })
    expect(shown.json<Record<string, unknown>>().args).toBeUndefined()
    expect((await db.cli('show', message.id, '--payload')).json()).toMatchObject({ args: [7] })
    const missing = uuid7()
    expect(await db.cli('show', missing)).toMatchObject({
      code: 3,
      stderr: `iddqueue show: no message ${missing}\n`,
    })
  })
})

describe('iddqueue failed retry, cancel and delete with --all', () => {
  it('counts with --dry-run, then acts in batches with progress on stderr', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('bulk')
    const other = uniqueQueue('other')
    const job = broker.actor('job', (_n: number) => {}, { queue })
    const elsewhere = broker.actor('elsewhere', (_n: number) => {}, { queue: other })
    await broker.enqueueMany([
      ...Array.from({ length: 5 }, (_, i) => ({ message: job.message(i), delayMs: 60_000 })),
      { message: elsewhere.message(0), delayMs: 60_000 },
    ])

    const dry = await db.cli('cancel', '--queue', queue, '--all', '--dry-run')
    expect(dry.code).toBe(0)
    expect(dry.json()).toEqual({ cancelled: 5, requested: 0, dryRun: true })
    expect(dry.stderr).toContain('dry run: 5 messages would be cancelled')
    expect(await states(db.sql, queue)).toEqual({ queued: 5 })

    const cancelled = await db.cli('cancel', '--queue', queue, '--all', '--batch-size', '2')
    expect(cancelled.json()).toEqual({ cancelled: 5, requested: 0, dryRun: false })
    expect(cancelled.stderr.trim().split('\n')).toHaveLength(3)
    expect(await states(db.sql, queue)).toEqual({ cancelled: 5 })
    expect(await states(db.sql, other)).toEqual({ queued: 1 })

    await db.sql`update iddqueue.messages set state = 'rejected',
                   failure = ${db.sql.json({ type: 'TypeError', message: 'x', at: '2030-01-01T00:00:00Z', attempt: 1 })}
                 where queue = ${queue}`
    const retryDry = await db.cli('failed', 'retry', '--queue', queue, '--all', '--dry-run')
    expect(retryDry.json()).toEqual({ retried: 5, dryRun: true })
    const retried = await db.cli(
      'failed',
      'retry',
      '--queue',
      queue,
      '--all',
      '--error-type',
      'TypeError',
    )
    expect(retried.json()).toEqual({ retried: 5, dryRun: false })
    expect(retried.stderr).toBe('retrying: 5 messages so far\n')
    expect(await states(db.sql, queue)).toEqual({ queued: 5 })

    await db.sql`update iddqueue.messages set state = 'done' where queue = ${queue}`
    const deleteDry = await db.cli('delete', '--queue', queue, '--all', '--dry-run')
    expect(deleteDry.json()).toEqual({ deleted: 5, dryRun: true })
    const deleted = await db.cli('delete', '--queue', queue, '--all', '--state', 'done,rejected')
    expect(deleted.json()).toEqual({ deleted: 5, dryRun: false })
    expect(await states(db.sql, queue)).toEqual({})
    expect(await states(db.sql, other)).toEqual({ queued: 1 })
  })

  it('refuses a bulk form without --all, or mixed with an ID, with exit 2', async () => {
    const id = uuid7()
    const cases: [string[], string][] = [
      [['cancel', '--queue', 'q'], 'iddqueue cancel: cancel needs an ID, or --all'],
      [['cancel', id, '--all'], 'iddqueue cancel: cancel: --all selects many messages'],
      [['failed', 'retry', '--queue', 'q'], 'iddqueue failed retry: failed retry needs an ID'],
      [['delete'], 'iddqueue delete: delete needs an ID, or --all'],
      [['delete', '--all', '--state', 'queued'], 'iddqueue delete: Invalid state ["queued"]'],
      [
        ['failed', 'retry', '--all', '--failed-before', 'yesterday'],
        'iddqueue failed retry: invalid --failed-before "yesterday"',
      ],
      // Valid JavaScript times outside years 1 to 9999, which PostgreSQL cannot
      // read as a timestamp: named as the argument given, not as core's option.
      [
        ['failed', 'retry', '--all', '--failed-before', '+010000-01-01T00:00:00Z'],
        'iddqueue failed retry: invalid --failed-before "+010000-01-01T00:00:00Z": expected an ISO 8601 time (such as 2030-01-01T00:00:00Z) or epoch milliseconds, from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z',
      ],
      [
        ['failed', 'retry', '--all', '--failed-before', '0000-12-31T00:00:00Z'],
        'iddqueue failed retry: invalid --failed-before "0000-12-31T00:00:00Z"',
      ],
      [
        ['failed', 'retry', '--all', '--failed-before', '8640000000000000'],
        'iddqueue failed retry: invalid --failed-before "8640000000000000"',
      ],
      [
        ['delete', '--all', '--finished-before', '-271821-04-20T00:00:00Z'],
        'iddqueue delete: invalid --finished-before "-271821-04-20T00:00:00Z"',
      ],
      [
        ['delete', '--all', '--finished-before', '253402300800000'],
        'iddqueue delete: invalid --finished-before "253402300800000"',
      ],
    ]
    for (const [argv, message] of cases) {
      const run = await db.cli(...argv)
      expect([argv, run.code]).toEqual([argv, 2])
      expect(run.stderr).toContain(message)
    }
  })

  it('takes times from year 1 to 9999, as ISO 8601 or epoch milliseconds', async () => {
    const queue = uniqueQueue('bulk_time')
    for (const argv of [
      ['failed', 'retry', '--failed-before', '9999-12-31T23:59:59.999Z'],
      ['failed', 'retry', '--failed-before', '253402300799999'],
      ['delete', '--finished-before', '0001-01-01T00:00:00Z'],
      ['delete', '--finished-before', '0'],
    ]) {
      const run = await db.cli(...argv, '--queue', queue, '--all', '--dry-run')
      expect([argv, run.code, run.stderr]).toEqual([argv, 0, expect.stringContaining('dry run')])
    }
  })

  it('retries one message by id with failed retry ID, as retry ID does', async () => {
    const missing = uuid7()
    const run = await db.cli('failed', 'retry', missing)
    expect(run.code).toBe(3)
    expect(run.json()).toEqual({ id: missing, status: 'missing' })
  })
})
