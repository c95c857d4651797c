import { useTestDatabase } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { describe, expect, it } from 'vitest'
import { type CliIo, main } from '../src/index.js'

const database = useTestDatabase()

function capture(env: Record<string, string | undefined> = {}) {
  const io = { stdout: '', stderr: '' }
  const cli: CliIo = {
    out: (text) => {
      io.stdout += text
    },
    err: (text) => {
      io.stderr += text
    },
    env,
  }
  return { io, cli }
}

describe('iddqueue CLI', () => {
  it('prints the init SQL for a namespace without a database', async () => {
    const { io, cli } = capture()
    expect(await main(['--schema', 'jobs', '--prefix', 'app_', 'sql', 'init'], cli)).toBe(0)
    expect(io.stdout).toContain('create table "jobs"."app_messages"')
  })

  it('migrates, reports nothing to do the second time, and checks for drift', async () => {
    const { io, cli } = capture({ DATABASE_URL: database.url })
    expect(await main(['--schema', 'cli_jobs', 'migrate'], cli)).toBe(0)
    expect(JSON.parse(io.stdout).applied).toEqual([
      { owner: '@iddqueue/core', version: 1, name: 'core-tables' },
      { owner: '@iddqueue/core', version: 2, name: 'message-progress' },
      { owner: '@iddqueue/core', version: 3, name: 'stats-read-paths' },
      { owner: '@iddqueue/core', version: 4, name: 'purge-read-path' },
    ])
    const again = capture({ DATABASE_URL: database.url })
    expect(await main(['--schema', 'cli_jobs', 'migrate'], again.cli)).toBe(0)
    expect(JSON.parse(again.io.stdout)).toEqual({ applied: [] })
    const check = capture()
    expect(await main(['--url', database.url, '--schema', 'cli_jobs', 'check'], check.cli)).toBe(0)
    expect(JSON.parse(check.io.stdout)).toEqual({ ok: true, differences: [] })
    const sql = postgres(database.url, { max: 1 })
    await sql`alter table cli_jobs.workers drop column host`
    await sql.end()
    const drift = capture()
    expect(await main(['--url', database.url, '--schema', 'cli_jobs', 'check'], drift.cli)).toBe(1)
    expect(JSON.parse(drift.io.stdout).differences).toEqual([
      '- workers: column host text not null',
    ])
    const upgrade = capture()
    expect(
      await main(['--url', database.url, '--schema', 'cli_jobs', 'sql', 'upgrade'], upgrade.cli),
    ).toBe(0)
    expect(upgrade.io.stdout).not.toContain('@iddqueue/core #1')
  })

  it('exits 2 on bad usage and hostile names, naming the problem', async () => {
    const cases: [string[], string][] = [
      [[], 'usage: iddqueue'],
      [['frobnicate'], 'unknown command "frobnicate"'],
      [['--nope', 'migrate'], "Unknown option '--nope'"],
      [['migrate'], 'no database; pass --url or set DATABASE_URL'],
      [['sql', 'drop'], 'expected "init" or "upgrade" or "grants", got "drop"'],
      [['--schema', 'x"; drop table y; --', 'sql', 'init'], 'Invalid schema name'],
      [['failed'], 'iddqueue failed: expected "list" or "show" or "retry", got ""'],
      [['failed', 'lst'], 'iddqueue failed: expected "list" or "show" or "retry", got "lst"'],
      [
        ['retry', crypto.randomUUID()],
        'iddqueue retry: no database; pass --url or set DATABASE_URL',
      ],
      [['--url', 'postgres://x/y', 'retry'], 'iddqueue retry: missing ID'],
      [['--queue', 'q', 'flush'], "Unknown option '--queue'"],
      [
        ['--url', 'postgres://x/y', 'stats', '--frobnicate'],
        "iddqueue stats: Unknown option '--frobnicate'",
      ],
      [
        ['--url', 'postgres://x/y', 'retry', '--payload', crypto.randomUUID()],
        "Unknown option '--payload'",
      ],
      [
        ['--url', 'postgres://x/y', '--schema', 'x"y', 'pause', 'q'],
        'iddqueue pause: Invalid schema name',
      ],
      [['--url', 'notaurl', 'stats'], 'iddqueue stats: invalid database URL'],
    ]
    for (const [argv, text] of cases) {
      const { io, cli } = capture()
      expect(await main(argv, cli), argv.join(' ')).toBe(2)
      expect(io.stderr).toContain(text)
      expect(io.stdout).toBe('')
    }
    // A URL that does not parse is refused without echoing it: it may hold a password.
    const secret = capture({ DATABASE_URL: 'postgres://me:hunter2@db:port/app' })
    expect(await main(['stats'], secret.cli)).toBe(2)
    expect(secret.io.stderr).toContain('invalid database URL')
    expect(secret.io.stderr).not.toContain('hunter2')
  })

  it('exits 1 when the database is unreachable, saying so', async () => {
    const url = 'postgres://root@127.0.0.1:1/none'
    const runs: [string[], string][] = [
      [['migrate'], 'iddqueue migrate: PostgreSQL is unreachable'],
      [['stats'], 'iddqueue stats: PostgreSQL is unreachable'],
      [
        ['failed', 'list'],
        'iddqueue failed list: Could not list failed messages: PostgreSQL is unreachable',
      ],
      [['retry', crypto.randomUUID()], 'PostgreSQL is unreachable'],
    ]
    for (const [argv, text] of runs) {
      const { io, cli } = capture()
      expect(await main(['--url', url, ...argv], cli), argv.join(' ')).toBe(1)
      expect(io.stderr).toContain(text)
      expect(io.stdout).toBe('')
    }
  })

  it('exits 1 naming a database that does not exist', async () => {
    const { io, cli } = capture()
    const url = new URL(database.url)
    url.pathname = '/no_such_database'
    expect(await main(['--url', url.href, 'failed', 'list'], cli)).toBe(1)
    expect(io.stderr).toBe(
      'iddqueue failed list: PostgreSQL: database "no_such_database" does not exist\n',
    )
  })

  it('prints the usage with --help, for the CLI or one command', async () => {
    const all = capture()
    expect(await main(['--help'], all.cli)).toBe(0)
    for (const command of [
      'failed list',
      'retry ID',
      'pause QUEUE',
      'history purge --older-than-ms N',
      'stats',
    ])
      expect(all.io.stdout).toContain(`  ${command}`)
    const one = capture()
    expect(await main(['failed', 'show', '--help'], one.cli)).toBe(0)
    expect(one.io.stdout).toContain('failed show ID [--payload]')
  })

  it('takes global options after the command too', async () => {
    const { io, cli } = capture()
    expect(await main(['sql', 'init', '--schema', 'late', '--prefix', 'p_'], cli)).toBe(0)
    expect(io.stdout).toContain('create table "late"."p_messages"')
  })
})
