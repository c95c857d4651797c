import { randomBytes } from 'node:crypto'
import { toExecutor } from '../executor/to-executor.js'
import { type Namespace, namespace, toNamespace } from '../namespace/namespace.js'
import { coreMigrations } from './core-migrations.js'
import { describeSchema, diffDescriptions } from './describe-schema.js'
import { ledgerStatements } from './ledger.js'
import { assertMigrationSets, type MigrationSet } from './migration.js'

/**
 * Options of {@link checkSchema}.
 *
 * @example
 * const check = await checkSchema(sql, {
 *   namespace: { schema: 'jobs' },
 *   owners: [coreMigrations, { owner: 'audit-log', migrations: auditMigrations }],
 * })
 */
export interface CheckSchemaOptions {
  readonly namespace?: Namespace | { schema?: string; prefix?: string } | undefined
  readonly owners?: readonly MigrationSet[] | undefined
}

/**
 * The result of {@link checkSchema}.
 *
 * @example
 * const { ok, differences }: SchemaCheck = await checkSchema(sql)
 * if (!ok) process.exitCode = 1
 */
export interface SchemaCheck {
  /** True when the live schema matches the migrations exactly. */
  readonly ok: boolean
  /** `- table: ...` is expected but missing; `+ table: ...` exists but is not expected. */
  readonly differences: readonly string[]
}

class Rollback extends Error {}

/**
 * Compares the live schema of a namespace with what its migrations produce
 * (drift detection): hand-made indexes, dropped columns, a half-applied
 * manual script.
 *
 * The expected schema is built in a scratch schema inside a transaction that
 * is rolled back, so nothing is left behind.
 *
 * @example
 * const check = await checkSchema(sql, { namespace: { schema: 'jobs' } })
 * if (!check.ok) console.error(check.differences.join('\n'))
 */
export async function checkSchema(
  db: unknown,
  options: CheckSchemaOptions = {},
): Promise<SchemaCheck> {
  const executor = toExecutor(db)
  const ns = toNamespace(options.namespace)
  const sets = options.owners ?? [coreMigrations]
  assertMigrationSets(sets)
  const scratch = namespace({
    schema: `iddqueue_check_${randomBytes(6).toString('hex')}`,
    prefix: ns.prefix,
  })
  let expected = {}
  try {
    await executor.transaction(async (tx) => {
      for (const statement of ledgerStatements(scratch)) await tx.query(statement)
      for (const set of sets) {
        for (const migration of set.migrations) {
          for (const statement of migration.up(scratch)) await tx.query(statement)
        }
      }
      expected = await describeSchema(tx, scratch)
      throw new Rollback()
    })
  } catch (error) {
    if (!(error instanceof Rollback)) throw error
  }
  const differences = diffDescriptions(expected, await describeSchema(executor, ns))
  return { ok: differences.length === 0, differences }
}
