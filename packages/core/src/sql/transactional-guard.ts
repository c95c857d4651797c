import type { Namespace } from '@iddqueue/schema'

/**
 * Locks a transactional run's message inside its transaction, if it is
 * still consumed by this worker, and tells whether its cancellation was
 * requested. No row: crash recovery gave it to another worker (this one
 * looked dead) or it was settled otherwise, so the run must roll back. The
 * row lock holds until commit, so recovery cannot take the message between
 * this check and the acknowledgement.
 *
 * Parameters: message id, worker id.
 */
export function transactionalGuardSql(ns: Namespace): string {
  return `select m.cancel_requested
  from ${ns.table('messages')} m
 where m.id = $1 and m.state = 'consumed' and m.worker_id = $2
   for update`
}
