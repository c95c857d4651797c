import { migrate } from '@iddqueue/schema'
import { createTestDatabase, startTestDatabase, type TestDatabase } from '@iddqueue/testing'
import postgres from 'postgres'

/**
 * A PostgreSQL this chaos test owns: an embedded server (never the shared
 * one other tests use) with one migrated database, a client for assertions
 * that reconnects on its own, and `restart()`/`outage()` to break it.
 */
export interface OwnedPostgres {
  /** URL of the migrated database. */
  readonly url: string
  /** Assertion client; application_name 'chaos-admin' so terminations can spare it. */
  readonly sql: postgres.Sql
  /** Restarts the server: 'fast' (clean) or 'immediate' (a crash). Resolves once it answers. */
  restart(mode: 'fast' | 'immediate', downMs?: number): Promise<void>
  stop(): Promise<void>
}

export async function ownPostgres(): Promise<OwnedPostgres> {
  // Real commit durability, so an immediate restart loses exactly what
  // PostgreSQL would: asynchronous commits (iddqueue's worker transactions),
  // never a send the producer was told is stored. fsync stays off: a crash
  // of the server process keeps the operating system's page cache.
  const server: TestDatabase = await startTestDatabase({
    mode: 'embedded',
    log: () => {},
    // The longest WAL writer delay widens the window of asynchronous commits
    // an immediate restart loses (the last partial WAL page), so one
    // restart reliably loses some acknowledgements.
    settings: { synchronous_commit: 'on', wal_writer_delay: '10000ms' },
  })
  const database = await createTestDatabase(server.url)
  const sql = postgres(database.url, {
    max: 2,
    onnotice: () => {},
    connection: { application_name: 'chaos-admin' },
    backoff: () => 0.05,
    // postgres.js re-reads array types on every new connection and leaves that
    // promise unhandled when the connection breaks meanwhile; this client needs none.
    fetch_types: false,
  })
  await migrate(sql)
  return {
    url: database.url,
    sql,
    async restart(mode, downMs = 0) {
      await server.restart!(downMs, { mode })
    },
    async stop() {
      await sql.end({ timeout: 1 }).catch(() => {})
      await database.drop().catch(() => {})
      await server.stop()
    },
  }
}
