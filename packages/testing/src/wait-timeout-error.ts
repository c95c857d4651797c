import { TestDatabaseError } from './test-database-error.js'

/**
 * {@link waitFor} gave up: its condition was still false when `timeoutMs` ran out.
 *
 * The message says how long it waited and what it waited for (the `message`
 * option of `waitFor`).
 *
 * @example
 * await expect(waitFor(() => false, { timeoutMs: 50, message: 'never' })).rejects.toThrow(
 *   WaitTimeoutError,
 * )
 */
export class WaitTimeoutError extends TestDatabaseError {}
