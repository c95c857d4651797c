import type { Namespace } from '@iddqueue/schema'

/**
 * Locks a transactional run's message inside its transaction, if it is
 * still consumed by this worker, and tells whether its cancellation was
 * requested. No row: crash recovery gave it to another worker (this one
 * looked dead) or it was settled otherwise, so the run must roll back. The
 * row lock holds until commit, so recovery cannot take the message between
 * this check and the acknowledgement. Also returns the session's
 * `synchronous_commit`, which the settle statement turns off for its own
 * transaction and the run puts back: the handler's writes commit durably.
 *
 * Parameters: message id, worker id.
 */
export function transactionalGuardSql(ns: Namespace): string {
  return `select m.cancel_requested, current_setting('synchronous_commit') as commit_mode
  from ${ns.table('messages')} m
 where m.id = $1 and m.state = 'consumed' and m.worker_id = $2
   for update`
}

/** Restores `synchronous_commit` for the rest of the transaction. Parameter: the setting. */
export const RESTORE_COMMIT_MODE = `select set_config('synchronous_commit', $1, true)`
