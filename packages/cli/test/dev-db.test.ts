import { type ChildProcess, spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { coreMigrations } from '@iddqueue/schema'
import postgres from 'postgres'
import { afterAll, describe, expect, it } from 'vitest'

const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url))
const PACKAGE = fileURLToPath(new URL('..', import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), 'iddqueue-dev-db-'))
// As root, PostgreSQL runs as user postgres, which must be able to enter it.
chmodSync(scratch, 0o755)
const dataDir = join(scratch, 'data')
const started: ChildProcess[] = []

afterAll(() => {
  for (const child of started) child.kill('SIGKILL')
  rmSync(scratch, { recursive: true, force: true })
})

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * `iddqueue dev-db` as a real process, run from this package (where
 * `@iddqueue/results` is installed); resolves once it printed its URL.
 */
async function devDb(port: number, { data = dataDir, args = [] as string[] } = {}) {
  const child = spawn(
    process.execPath,
    [BIN, 'dev-db', '--port', String(port), '--data', data, ...args],
    { cwd: PACKAGE, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  started.push(child)
  let stdout = ''
  let stderr = ''
  child.stderr!.on('data', (chunk) => {
    stderr += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      stdout += chunk
      if (stdout.includes('\n')) resolve(stdout.trim())
    })
    void exited.then((code) => reject(new Error(`dev-db exited ${code}: ${stderr}`)))
  })
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
  return { child, url, exited, postmaster, stderr: () => stderr }
}

describe('iddqueue dev-db', () => {
  it('starts a migrated PostgreSQL, keeps its data across a restart and stops on SIGINT and SIGTERM with no process left', async () => {
    const port = await freePort()
    const first = await devDb(port)
    expect(first.url).toBe(`postgres://postgres:postgres@127.0.0.1:${port}/postgres`)
    let sql = postgres(first.url, { max: 1, onnotice: () => {} })
    await sql`create table kept (note text)`
    await sql`insert into kept values ('across runs')`
    const [migrated] = await sql`select count(*)::int as n from iddqueue.messages`
    expect(migrated!.n).toBe(0)
    await sql.end()
    first.child.kill('SIGINT')
    expect(await first.exited, first.stderr()).toBe(0)
    expect(alive(first.postmaster)).toBe(false)
    expect(first.stderr()).toContain('created ')

    const second = await devDb(port)
    sql = postgres(second.url, { max: 1, onnotice: () => {} })
    expect(await sql`select note from kept`).toEqual([{ note: 'across runs' }])
    await sql.end()
    expect(second.stderr()).toContain('reused ')
    expect(second.stderr()).toContain('0 migrations applied')
    second.child.kill('SIGTERM')
    expect(await second.exited, second.stderr()).toBe(0)
    expect(alive(second.postmaster)).toBe(false)
  }, 180_000)

  it('applies the migrations of --plugins beside core: @iddqueue/results gets its table', async () => {
    const port = await freePort()
    const data = join(scratch, 'data-plugins')
    const run = await devDb(port, { data, args: ['--plugins', '@iddqueue/results'] })
    const sql = postgres(run.url, { max: 1, onnotice: () => {} })
    try {
      const relations = await sql`select c.relname, c.relkind
          from pg_class c join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = 'iddqueue' and c.relname like 'results%' order by c.relname`
      expect(relations).toEqual([
        { relname: 'results', relkind: 'r' },
        { relname: 'results_expires', relkind: 'i' },
        { relname: 'results_pkey', relkind: 'i' },
      ])
      const ledger = await sql`select owner, version, name from iddqueue.migrations
         where owner <> ${coreMigrations.owner} order by owner, version`
      expect(ledger).toEqual([{ owner: '@iddqueue/results', version: 1, name: 'create-results' }])
    } finally {
      await sql.end()
    }
    run.child.kill('SIGINT')
    expect(await run.exited, run.stderr()).toBe(0)
    expect(alive(run.postmaster)).toBe(false)
    // Read once it exited: stderr may arrive after the URL on stdout.
    expect(run.stderr()).toContain('applying @iddqueue/results #1 create-results\n')
    expect(run.stderr()).toContain(
      `created ${data}; ${coreMigrations.migrations.length + 1} migrations applied\n`,
    )
  }, 180_000)
})
