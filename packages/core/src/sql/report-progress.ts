import type { Namespace } from '@iddqueue/schema'

/**
 * Stores the progress a running handler reported, only while the message
 * is still consumed by this worker (a recovered or settled message is left
 * alone). The JSON is sent as text and cast here (see `claim-deduplication-key.ts`).
 *
 * Parameters: message id, progress JSON (text), worker id.
 */
export function reportProgressSql(ns: Namespace): string {
  return `update ${ns.table('messages')} set progress = $2::text::jsonb
 where id = $1 and state = 'consumed' and worker_id = $3`
}
