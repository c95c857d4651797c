import type { Executor, Namespace } from '@iddqueue/schema'
import { purgeResultsSql } from './sql/purge-results.js'

/**
 * @internal Deletes expired results in batches, each its own short transaction. With
 * `exclusive` (the periodic purge), each batch first takes the namespace's
 * results-purge lock and the purge stops if another process holds it.
 */
export async function purgeExpired(
  setup: { readonly executor: Executor; readonly ns: Namespace },
  batchSize: number,
  exclusive: boolean,
): Promise<number> {
  const sql = purgeResultsSql(setup.ns)
  const lockKey = setup.ns.lockKey('results-purge').toString()
  let total = 0
  for (;;) {
    const deleted = await setup.executor.transaction(async (tx) => {
      if (exclusive) {
        const [lock] = await tx.query<{ ok: boolean }>(
          'select pg_try_advisory_xact_lock($1::bigint) as ok',
          [lockKey],
        )
        if (!lock?.ok) return undefined
      }
      const [row] = await tx.query<{ deleted: number }>(sql, [batchSize])
      return row?.deleted ?? 0
    })
    if (deleted === undefined) return total
    total += deleted
    if (deleted < batchSize) return total
  }
}
