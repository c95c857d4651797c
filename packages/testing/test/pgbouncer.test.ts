import postgres from 'postgres'
import { describe, expect, it } from 'vitest'
import { findPgBouncer, startPgBouncer, TestDatabaseError } from '../src/index.js'
import { useTestDatabase } from '../src/vitest.js'
import { processRuns } from './helpers.js'

const db = useTestDatabase()
const binary = findPgBouncer()
// CI installs pgbouncer (.ci/run): there a missing binary fails the run
// instead of skipping this file and staying green. Elsewhere it skips.
if (binary === undefined) {
  if (!['', '0', 'false'].includes(process.env.CI ?? '')) {
    throw new Error(
      `pgbouncer is not installed, and CI=${process.env.CI} is set, where the PgBouncer tests must run: install it (apt-get install pgbouncer; .ci/run's SYSTEM_PACKAGES does)`,
    )
  }
  console.warn('[testing] PgBouncer tests skipped: no pgbouncer binary (apt-get install pgbouncer)')
}

describe.skipIf(binary === undefined)('startPgBouncer', () => {
  it('pools transactions in front of the server, and stop() ends it', async () => {
    const bouncer = await startPgBouncer({ serverUrl: db.url, defaultPoolSize: 2 })
    const name = new URL(db.url).pathname.slice(1)
    const sql = postgres(bouncer.url(name), { prepare: false, max: 4, onnotice: () => {} })
    try {
      const [row] = await sql<
        { db: string; one: number }[]
      >`select current_database() as db, 1 as one`
      expect(row).toEqual({ db: name, one: 1 })
      // The template's rows are there: the same database, through the pooler.
      expect((await sql`select id from widgets order by id`).map((r) => r.id)).toEqual([1, 2])

      // Transaction pooling: four concurrent clients share at most two server connections.
      const pids = await Promise.all(
        Array.from({ length: 8 }, () =>
          sql.begin(async (tx) => (await tx`select pg_backend_pid() as pid`)[0]?.pid),
        ),
      )
      expect(new Set(pids).size).toBeLessThanOrEqual(2)
    } finally {
      await sql.end()
      await bouncer.stop()
    }
    await expect(
      postgres(bouncer.url(name), { max: 1, connect_timeout: 2 })`select 1`,
    ).rejects.toThrow()
    await bouncer.stop() // twice is harmless
  })

  it('leaves no process behind', async () => {
    const bouncer = await startPgBouncer({ serverUrl: db.url })
    expect(processRuns(bouncer.pid)).toBe(true)
    await bouncer.stop()
    expect(processRuns(bouncer.pid)).toBe(false)
  })

  it('refuses a bad pool size and a missing binary with TestDatabaseError', async () => {
    await expect(startPgBouncer({ serverUrl: db.url, defaultPoolSize: 0 })).rejects.toThrow(
      'startPgBouncer option `defaultPoolSize` must be a positive integer, got 0',
    )
    await expect(
      startPgBouncer({ serverUrl: db.url, binary: '/nonexistent/pgbouncer' }),
    ).rejects.toThrow(TestDatabaseError)
    await expect(startPgBouncer({ serverUrl: 'mysql://x' })).rejects.toThrow(TestDatabaseError)
  })
})
