import type { Middleware, SettleEvent } from '../../src/index.js'
import { setupDatabase } from '../helpers.js'

/**
 * The database and helpers the middleware tests share. Each test file that
 * imports this module gets its own database: vitest loads modules per file.
 */
export const db = setupDatabase()

/** Quick retries, for tests that wait on them. */
export const FAST = { minBackoffMs: 10, maxBackoffMs: 20 } as const

export class PermanentError extends Error {
  override name = 'PermanentError'
}
export class CardDeclined extends PermanentError {
  override name = 'CardDeclined'
}

export async function messageRow(id: string) {
  const [row] = await db.sql`select state, retries, attempts, failure,
      (extract(epoch from updated_at - started_at) * 1000)::float8 as settled_after_ms
    from iddqueue.messages where id = ${id}`
  return row!
}

export async function stateOf(id: string): Promise<string | undefined> {
  const [row] = await db.sql`select state from iddqueue.messages where id = ${id}`
  return row?.state
}

/** A message row as its settle transaction sees it, right after the outcome is written. */
export interface SettleSnapshot {
  id: string
  state: string
  retries: number
  /** eta − updated_at: the delay the settle statement stored. */
  delay_ms: number
  eta_ms: number
  started_ms: number
  failure: { type: string; message: string; at: string; stack?: string } | null
}

/** Reads the settled rows inside each settle transaction (a settle hook, as plugins write). */
export function settleProbe(snapshots: SettleSnapshot[]): Middleware {
  return {
    async settle(event) {
      const rows = await event.executor.query<SettleSnapshot>(
        `select id, state, retries, failure,
                (extract(epoch from eta - updated_at) * 1000)::float8 as delay_ms,
                (extract(epoch from eta) * 1000)::float8 as eta_ms,
                (extract(epoch from started_at) * 1000)::float8 as started_ms
           from iddqueue.messages where id = any($1::uuid[])`,
        [event.settled.map((s) => s.message.id)],
      )
      snapshots.push(...rows)
    },
  }
}

/**
 * A settle hook that holds open the first settle transaction `matches`
 * picks (after the outcome and follow-up messages are written in it), until
 * `release()`; then fails it once, so it rolls back and the worker writes it
 * again.
 */
export function settleGate(matches: (event: SettleEvent) => boolean) {
  let entered!: () => void
  let release!: () => void
  const enteredPromise = new Promise<void>((resolve) => {
    entered = resolve
  })
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let used = false
  const middleware: Middleware = {
    async settle(event) {
      if (used || !matches(event)) return
      used = true
      entered()
      await released
      throw new Error('settle gate: failing this settle transaction once')
    },
  }
  return { middleware, entered: enteredPromise, release }
}

/** Resolves `count` waiters together, once the last one has arrived. */
export function barrier(count: number) {
  let arrived = 0
  let open!: () => void
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return () => {
    arrived++
    if (arrived === count) open()
    return opened
  }
}
