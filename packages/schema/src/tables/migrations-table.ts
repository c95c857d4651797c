import type { ColumnType } from 'kysely'

/**
 * The migration ledger: one row per applied migration, per owner.
 *
 * @example
 * const ledger: Selectable<MigrationsTable>[] = await db.selectFrom('migrations').selectAll().execute()
 */
export interface MigrationsTable {
  owner: string
  version: number
  name: string
  checksum: string
  applied_at: ColumnType<Date, Date | string | undefined, never>
}
