/**
 * A condition that is always true and, evaluated once per statement, makes
 * the statement's own transaction commit without waiting for its WAL flush
 * (`synchronous_commit = off`, transaction-local).
 *
 * Only for the worker's own writes, where losing a commit in a database crash
 * is harmless under at-least-once delivery: a lost claim leaves the message
 * queued, a lost acknowledgement makes it run again. Sends, retries, pause
 * and cancel stay durable. It removes an fsync from the path between a send
 * and its handler's start.
 */
export const ASYNC_COMMIT = `(select set_config('synchronous_commit', 'off', true)) is not null`
