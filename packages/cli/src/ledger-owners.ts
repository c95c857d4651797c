import { toNamespace } from '@iddqueue/schema'
import type postgres from 'postgres'
import type { GlobalOptions } from './global-options.js'

/**
 * @internal What the namespace's migration ledger records: `null` when it
 * has no ledger (nothing was ever migrated there), else the migrations
 * applied, as `owner#version`, and their owners in ledger order.
 */
export async function readLedgerOwners(
  sql: postgres.Sql,
  global: GlobalOptions,
): Promise<{ readonly owners: readonly string[]; readonly applied: ReadonlySet<string> } | null> {
  const table = toNamespace({ schema: global.schema, prefix: global.prefix }).table('migrations')
  const [found] = await sql`select to_regclass(${table}) is not null as present`
  if (!found?.present) return null
  const rows = await sql.unsafe<{ owner: string; version: number }[]>(
    `select owner, version from ${table} order by applied_at, owner, version`,
  )
  return {
    owners: [...new Set(rows.map((row) => row.owner))],
    applied: new Set(rows.map((row) => `${row.owner}#${row.version}`)),
  }
}
