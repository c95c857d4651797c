import postgres from 'postgres'
import { describe, expect, it } from 'vitest'
import { setupDatabase } from './helpers.js'

const db = setupDatabase()

// postgres.js 3.4.9 schedules a small write for the next turn of the event
// loop and, if the connection closed in between, writes to a socket it has
// already dropped: an uncaught TypeError that ends the process
// (porsager/postgres#1208; it failed this repository's chaos test of
// terminated backends once). The workspace applies the upstream fix as a
// pnpm patch (patches/postgres@3.4.9.patch) until a release carries it.
describe('postgres.js, as patched here', () => {
  it('rejects a query on a reserved connection whose backend was terminated, without an uncaught exception', async () => {
    let closed: () => void = () => {}
    const closedOnce = new Promise<void>((resolve) => {
      closed = resolve
    })
    const sql = postgres(db.url, { max: 1, onnotice: () => {}, onclose: () => closed() })
    try {
      const reserved = await sql.reserve()
      const [row] = await reserved`select pg_backend_pid() as pid`
      await db.sql`select pg_terminate_backend(${row?.pid as number})`
      await closedOnce
      await expect(reserved`select 1`).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' })
      reserved.release()
    } finally {
      await sql.end({ timeout: 1 })
    }
  })
})
