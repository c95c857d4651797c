import type { CoordinationSetup } from './coordination-setup.js'
import {
  EXPIRING_TABLES,
  purgeExpiredSql,
  purgeLocksSql,
  purgeRateWindowsSql,
} from './sql/purge-sql.js'

/** @internal Deletes expired coordination rows in batches of `batchSize`; returns how many. */
export async function purgeCoordination(
  setup: Pick<CoordinationSetup, 'executor' | 'ns'>,
  batchSize: number,
): Promise<number> {
  let total = 0
  for (const sql of [
    ...EXPIRING_TABLES.map((name) => purgeExpiredSql(setup.ns, name)),
    purgeLocksSql(setup.ns),
    purgeRateWindowsSql(setup.ns),
  ]) {
    for (;;) {
      const [row] = await setup.executor.query<{ deleted: number }>(sql, [batchSize])
      const deleted = row?.deleted ?? 0
      total += deleted
      if (deleted < batchSize) break
    }
  }
  return total
}
