import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { waitFor } from '@iddqueue/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { setupDatabase } from './helpers.js'

const db = setupDatabase()
const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url))
const SCHEMA = 'cli_schedules'
const cli = (...argv: string[]) => db.cli('--schema', SCHEMA, ...argv)

beforeAll(async () => {
  const migrated = await cli('migrate', '--plugins', '@iddqueue/scheduler')
  expect(migrated.code, migrated.stderr).toBe(0)
})

describe('iddqueue schedule', () => {
  it('creates, shows, lists, updates, computes next runs, disables, enables and deletes', async () => {
    const created = await cli(
      'schedule',
      'create',
      'reports',
      'generate_report',
      '--queue',
      'reports',
      '--every-ms',
      '60000',
      '--args',
      '[{"account":42}]',
    )
    expect(created.code, created.stderr).toBe(0)
    expect(created.json()).toMatchObject({
      name: 'reports',
      queue: 'reports',
      everyMs: 60_000,
      args: [{ account: 42 }],
    })

    const again = await cli('schedule', 'create', 'reports', 'other', '--every-ms', '5')
    expect(again.code).toBe(4)
    expect(again.json()).toEqual({ name: 'reports', status: 'exists' })

    expect((await cli('schedule', 'show', 'reports')).json()).toMatchObject({
      actor: 'generate_report',
    })
    expect((await cli('schedule', 'list')).json()).toMatchObject({ items: [{ name: 'reports' }] })

    const updated = await cli(
      'schedule',
      'update',
      'reports',
      '--cron',
      '30 2 * * *',
      '--timezone',
      'Europe/Paris',
    )
    expect(updated.code, updated.stderr).toBe(0)
    expect(updated.json()).toMatchObject({
      cron: '30 2 * * *',
      timezone: 'Europe/Paris',
      everyMs: null,
    })
    const next = (await cli('schedule', 'next', 'reports', '--count', '3')).json() as {
      runs: string[]
    }
    expect(next.runs).toHaveLength(3)
    expect(next.runs.every((run) => /T0[01]:30:00\.000Z$/.test(run))).toBe(true) // 02:30 Paris

    expect((await cli('schedule', 'disable', 'reports')).stdout).toBe('disabled reports\n')
    expect((await cli('schedule', 'show', 'reports')).json()).toMatchObject({ enabled: false })
    expect((await cli('schedule', 'enable', 'reports', '--json')).json()).toEqual({
      name: 'reports',
      status: 'enabled',
    })
    expect((await cli('schedule', 'delete', 'reports')).code).toBe(0)
    for (const command of ['show', 'enable', 'disable', 'delete', 'next']) {
      const missing = await cli('schedule', command, 'reports')
      expect([command, missing.code]).toEqual([command, 3])
      expect(missing.json()).toEqual({ name: 'reports', status: 'missing' })
    }
  })

  it('refuses bad input with exit 2, naming the value, storing nothing', async () => {
    const cases: [string[], string][] = [
      [['--cron', 'every tuesday'], 'every tuesday'],
      [['--cron', '0 3 * * *', '--timezone', 'Mars/Olympus'], 'Mars/Olympus'],
      [['--every-ms', '0'], 'everyMs 0'],
      [['--every-ms', 'NaN'], 'NaN'],
      [
        [
          '--every-ms',
          '1000',
          '--start-at',
          '2026-06-01T00:00:00Z',
          '--end-at',
          '2026-05-01T00:00:00Z',
        ],
        'endAt',
      ],
      [['--every-ms', '1000', '--queue', 'bad queue'], 'bad queue'],
      [['--every-ms', '1000', '--args', '{"not":"an array"}'], '--args'],
      [['--every-ms', '1000', '--catch-up', 'some'], '--catch-up'],
    ]
    for (const [options, named] of cases) {
      const run = await cli('schedule', 'create', 'bad', 'a', ...options)
      expect([options.join(' '), run.code]).toEqual([options.join(' '), 2])
      expect(run.stderr).toContain(named)
    }
    expect((await cli('schedule', 'list')).json()).toEqual({ items: [] })
  })
})

describe('iddqueue scheduler', () => {
  it('--once publishes what is due, once', async () => {
    await cli('schedule', 'create', 'once', 'beat', '--every-ms', '3600000', '--catch-up', '3')
    const first = await cli('scheduler', '--once')
    expect(first.code, first.stderr).toBe(0)
    const result = first.json() as { published: { schedule: string; messageId: string }[] }
    expect(result.published.map((o) => o.schedule)).toEqual(['once'])
    expect((await cli('scheduler', '--once')).json()).toMatchObject({ schedules: 0, published: [] })
    const [row] = await db.sql`select actor, options -> 'schedule' ->> 'name' as name
      from ${db.sql(SCHEMA)}.messages where id = ${result.published[0]!.messageId}::uuid`
    expect(row).toEqual({ actor: 'beat', name: 'once' })
    await cli('schedule', 'delete', 'once')
  })

  it('runs until SIGTERM, publishing due occurrences, then exits 0 after the current tick', async () => {
    const scheduler = startSchedulerProcess()
    try {
      await scheduler.printed('scheduler running')
      await cli('schedule', 'create', 'live', 'beat', '--every-ms', '3600000')
      await scheduler.printed('published live')
    } finally {
      scheduler.child.kill('SIGTERM')
    }
    expect(await scheduler.exited).toBe(0)
    expect(scheduler.stderr()).toContain('scheduler stopped; 1 occurrence published')
    await cli('schedule', 'delete', 'live')
  })

  it('on SIGINT finishes the tick in flight, commits its message, then exits 0', async () => {
    const scheduler = startSchedulerProcess()
    // Holds back the tick: the test's transaction locks the messages table
    // against inserts until it commits, so the tick's insert waits on it.
    let releaseLock!: () => void
    const lockReleased = new Promise<void>((resolve) => {
      releaseLock = resolve
    })
    let lockTaken!: () => void
    const locked = new Promise<void>((resolve) => {
      lockTaken = resolve
    })
    let holding: Promise<unknown> | undefined
    let interrupted = false
    try {
      await scheduler.printed('scheduler running')
      holding = db.sql.begin(async (tx) => {
        await tx`lock table ${tx(SCHEMA)}.messages in share row exclusive mode`
        lockTaken()
        await lockReleased
      })
      await locked
      await cli('schedule', 'create', 'held', 'beat', '--every-ms', '3600000')
      await waitFor(
        async () => {
          const rows = await db.sql`select 1 from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'
            and pid <> pg_backend_pid() and query ilike ${`%insert into%${SCHEMA}%messages%`}`
          return rows.length > 0
        },
        { timeoutMs: 20_000, intervalMs: 20, message: "the tick's insert to wait on the lock" },
      )
      interrupted = scheduler.child.kill('SIGINT')
      await scheduler.printed('SIGINT: stopping after the current tick')
      // The signal is handled and the tick is still in flight: nothing is stored yet.
      expect(scheduler.child.exitCode).toBeNull()
      expect(await heldMessages()).toEqual([])
    } finally {
      releaseLock()
      await holding
      // A second signal would end the process at once: only when the test failed before SIGINT.
      if (!interrupted) scheduler.child.kill('SIGTERM')
    }
    expect(await scheduler.exited).toBe(0)
    const published = /published held \S+ (\S+)\n/.exec(scheduler.stderr())
    expect(published, scheduler.stderr()).not.toBeNull()
    expect(scheduler.stderr()).toContain('scheduler stopped; 1 occurrence published')
    expect(await heldMessages()).toEqual([{ id: published![1], actor: 'beat' }])
    await cli('schedule', 'delete', 'held')
  })
})

/** The messages the schedule `held` published. */
async function heldMessages() {
  const rows = await db.sql`select id::text as id, actor from ${db.sql(SCHEMA)}.messages
    where options -> 'schedule' ->> 'name' = 'held'`
  return rows.map((row) => ({ id: row.id as string, actor: row.actor as string }))
}

/** `iddqueue scheduler` in a child process, its stderr collected. */
function startSchedulerProcess() {
  const child = spawn(process.execPath, [BIN, '--url', db.url, '--schema', SCHEMA, 'scheduler'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk)
  })
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  )
  return {
    child,
    exited,
    stderr: () => stderr,
    /** Resolves once the process printed `text` on stderr; fails if it exits first. */
    async printed(text: string) {
      await waitFor(
        () => stderr.includes(text) || child.exitCode !== null || child.signalCode !== null,
        {
          timeoutMs: 20_000,
          intervalMs: 50,
          message: text,
        },
      )
      if (!stderr.includes(text)) {
        throw new Error(
          `iddqueue scheduler exited (${child.exitCode ?? child.signalCode}) before printing ${JSON.stringify(text)}; stderr: ${stderr}`,
        )
      }
    },
  }
}
