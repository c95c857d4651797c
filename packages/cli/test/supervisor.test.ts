import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createBroker } from '@iddqueue/core'
import { waitFor } from '@iddqueue/testing'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './helpers.js'

const database = useTestDatabase()
const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url))
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url))
const SCHEMA = 'cli_supervisor'

let sql: postgres.Sql
let scratch: string
const children: ChildProcess[] = []

beforeAll(async () => {
  sql = postgres(database.url, { max: 1, onnotice: () => {} })
  scratch = mkdtempSync(join(tmpdir(), 'iddqueue-supervisor-'))
  const broker = createBroker({ url: database.url, namespace: { schema: SCHEMA } })
  await broker.migrate()
  await broker.close()
})
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
})
afterAll(async () => {
  await sql.end()
  rmSync(scratch, { recursive: true, force: true })
})

interface Supervisor {
  readonly child: ChildProcess
  readonly exited: Promise<number | null>
  stderr(): string
}

/** `iddqueue worker ./crashing-app.mjs --processes ...` as a real process on the test file's database. */
function supervise(args: string[], env: Record<string, string> = {}): Supervisor {
  const { DATABASE_URL: _, ...inherited } = process.env
  const child = spawn(process.execPath, [BIN, 'worker', './crashing-app.mjs', ...args], {
    cwd: FIXTURES,
    env: { ...inherited, WORKER_APP_URL: database.url, APP_SCHEMA: SCHEMA, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let stderr = ''
  child.stderr!.on('data', (chunk) => {
    stderr += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  return { child, exited, stderr: () => stderr }
}

/** Waits for `check` (every 50 ms, 60 s at most), or fails naming `what`. */
function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  return waitFor(check, { timeoutMs: 60_000, intervalMs: 50, message: what })
}

async function enqueue(count: number): Promise<void> {
  const producer = createBroker({ url: database.url, namespace: { schema: SCHEMA } })
  const record = producer.actor('record', async (n: number) => n, { queue: 'default' })
  await producer.enqueueMany(Array.from({ length: count }, (_, i) => record.message(i)))
  await producer.close()
}

async function count(where: 'consumed' | 'unfinished' | 'workers'): Promise<number> {
  const table = sql(SCHEMA)
  const [row] =
    where === 'workers'
      ? await sql`select count(*)::int as n from ${table}.workers`
      : where === 'consumed'
        ? await sql`select count(*)::int as n from ${table}.messages where state = 'consumed'`
        : await sql`select count(*)::int as n from ${table}.messages where state <> 'done'`
  return row!.n
}

describe('iddqueue worker --processes', () => {
  it('restarts a worker process that crashed, and runs the messages', async () => {
    const supervisor = supervise(['--processes', '1'], {
      CRASH_MARKER: join(scratch, 'crashed-once'),
    })
    await until(
      () => supervisor.stderr().includes('SIGTERM or SIGINT stops it'),
      'the restarted worker',
    )
    expect(supervisor.stderr()).toMatch(
      /worker process #1 exited with code 70; restarting it in \d+ ms\n/,
    )
    await enqueue(10)
    await until(async () => (await count('unfinished')) === 0, 'the messages to be done')
    supervisor.child.kill('SIGTERM')
    expect(await supervisor.exited, supervisor.stderr()).toBe(0)
  })

  it('stops a crash loop with exit code 6 and says so', async () => {
    const supervisor = supervise(['--processes', '2', '--max-restarts', '2'], {
      CRASH_ALWAYS: '1',
    })
    expect(await supervisor.exited).toBe(6)
    expect(supervisor.stderr()).toMatch(
      /iddqueue worker: crash loop: worker processes exited 3 times within 60 s \(the last, #\d, exited with code 70\); stopping all \(exit 6\)\n/,
    )
  })

  it('stops every worker process gracefully on SIGTERM, leaving no message consumed', async () => {
    await sql`delete from ${sql(SCHEMA)}.messages`
    await enqueue(60)
    const supervisor = supervise(['--processes', '2', '--concurrency', '2'], { SLOW_MS: '100' })
    await until(
      () => supervisor.stderr().match(/\] worker [0-9a-f-]{36} running /g)?.length === 2,
      'two running workers',
    )
    expect(await count('workers')).toBe(2)
    await until(async () => (await count('consumed')) > 0, 'messages being run')
    supervisor.child.kill('SIGTERM')
    expect(await supervisor.exited, supervisor.stderr()).toBe(0)
    expect(await count('consumed')).toBe(0)
    expect(await count('workers')).toBe(0)
    expect(supervisor.stderr()).toContain('SIGTERM: stopping 2 worker processes gracefully')
    expect(supervisor.stderr().match(/\] worker [0-9a-f-]{36} stopped\n/g)).toHaveLength(2)
  })

  it('stops every worker process gracefully on SIGINT too, leaving no message consumed', async () => {
    await sql`delete from ${sql(SCHEMA)}.messages`
    await enqueue(60)
    const supervisor = supervise(['--processes', '2', '--concurrency', '2'], { SLOW_MS: '100' })
    await until(
      () => supervisor.stderr().match(/\] worker [0-9a-f-]{36} running /g)?.length === 2,
      'two running workers',
    )
    expect(await count('workers')).toBe(2)
    await until(async () => (await count('consumed')) > 0, 'messages being run')
    supervisor.child.kill('SIGINT')
    expect(await supervisor.exited, supervisor.stderr()).toBe(0)
    expect(await count('consumed')).toBe(0)
    expect(await count('workers')).toBe(0)
    expect(supervisor.stderr()).toContain('SIGINT: stopping 2 worker processes gracefully\n')
    // The supervisor forwards SIGTERM: each child stops as on SIGTERM.
    expect(supervisor.stderr().match(/\] SIGTERM: stopping; /g)).toHaveLength(2)
    expect(supervisor.stderr().match(/\] worker [0-9a-f-]{36} stopped\n/g)).toHaveLength(2)
    expect(supervisor.stderr()).not.toContain('did not stop cleanly')
  })

  it('exits 1 and names the worker process that did not stop cleanly', async () => {
    await sql`delete from ${sql(SCHEMA)}.messages`
    await enqueue(60)
    // Process #2 stops its worker gracefully, then exits with 3.
    const supervisor = supervise(['--processes', '2', '--concurrency', '2'], {
      SLOW_MS: '100',
      STOP_EXIT_CODE: '3',
      STOP_EXIT_PROCESS: '2',
    })
    await until(
      () => supervisor.stderr().match(/\] worker [0-9a-f-]{36} running /g)?.length === 2,
      'two running workers',
    )
    await until(async () => (await count('consumed')) > 0, 'messages being run')
    supervisor.child.kill('SIGTERM')
    expect(await supervisor.exited, supervisor.stderr()).toBe(1)
    expect(supervisor.stderr()).toContain(
      'iddqueue worker: 1 of 2 worker processes did not stop cleanly (#2: exited with code 3)\n',
    )
    // The failure is the exit code alone: both workers stopped gracefully.
    expect(await count('consumed')).toBe(0)
    expect(await count('workers')).toBe(0)
    // Stopping is not crashing: nothing was restarted.
    expect(supervisor.stderr()).not.toContain('restarting it')
  })

  it('starts one worker process per CPU with --processes auto', async () => {
    const cpus = availableParallelism()
    const supervisor = supervise(['--processes', 'auto'])
    await until(
      () => supervisor.stderr().match(/\] worker [0-9a-f-]{36} running /g)?.length === cpus,
      `${cpus} running workers`,
    )
    expect(supervisor.stderr()).toContain(
      `iddqueue worker: starting ${cpus} worker processes; SIGTERM or SIGINT stops them\n`,
    )
    expect(await count('workers')).toBe(cpus)
    // One worker per process: as many distinct pids as CPUs.
    const pids = await sql`select distinct pid from ${sql(SCHEMA)}.workers`
    expect(pids).toHaveLength(cpus)
    supervisor.child.kill('SIGTERM')
    expect(await supervisor.exited, supervisor.stderr()).toBe(0)
    expect(await count('workers')).toBe(0)
  })

  it('exits 2 for a bad --processes or --max-restarts without it', async () => {
    const cases: [string[], string][] = [
      [['--processes', '0'], 'invalid --processes "0": expected a whole number from 1, or auto'],
      [['--processes', 'all'], 'invalid --processes "all"'],
      [['--max-restarts', '3'], '--max-restarts applies to --processes only'],
      [['--processes', '2', '--concurrency', 'x'], 'invalid --concurrency "x"'],
    ]
    for (const [args, message] of cases) {
      const { code, stderr } = await runCli(['worker', './crashing-app.mjs', ...args], {}, FIXTURES)
      expect([args, code]).toEqual([args, 2])
      expect(stderr).toContain(message)
    }
  })
})
