import { setTimeout as sleep } from 'node:timers/promises'
import { TestDatabaseError } from './test-database-error.js'
import { WaitTimeoutError } from './wait-timeout-error.js'

/**
 * Options of {@link waitFor}.
 *
 * @example
 * const options: WaitForOptions = { timeoutMs: 2_000, intervalMs: 50, message: 'the email row' }
 */
export interface WaitForOptions {
  /** How long to keep polling before throwing {@link WaitTimeoutError}. Default 10000. */
  readonly timeoutMs?: number | undefined
  /** The pause between two polls. Default 20. */
  readonly intervalMs?: number | undefined
  /** What is awaited, quoted in the timeout error. Default `'condition'`. */
  readonly message?: string | undefined
}

/**
 * Polls `condition` until it returns true, or throws {@link WaitTimeoutError}.
 *
 * The condition may be async, such as a query. It runs at once, then every
 * `intervalMs` (default 20) until `timeoutMs` (default 10000) has passed; an
 * error it throws ends the wait and is rethrown as is.
 *
 * @example
 * await sendReceipt.send('order-1')
 * await waitFor(async () => (await sql`select 1 from receipts`).length === 1, {
 *   message: 'the receipt row',
 * })
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  options: WaitForOptions = {},
): Promise<void> {
  const { timeoutMs = 10_000, intervalMs = 20, message = 'condition' } = options
  for (const [option, value] of [
    ['timeoutMs', timeoutMs],
    ['intervalMs', intervalMs],
  ] as const) {
    if (!Number.isFinite(value) || value < 0) {
      throw new TestDatabaseError(
        `waitFor option \`${option}\` must be a finite number >= 0, got ${value}`,
      )
    }
  }
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await condition()) return
    if (Date.now() >= deadline) {
      throw new WaitTimeoutError(`waitFor timed out after ${timeoutMs} ms waiting for ${message}`)
    }
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())))
  }
}
