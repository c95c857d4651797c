import { SchemaNotReadyError } from '@iddqueue/core'
import { checkSchema } from '@iddqueue/schema'
import postgres from 'postgres'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { readLedgerOwners } from '../ledger-owners.js'
import { migrationSets, PLUGINS_OPTION } from '../plugin-migrations.js'
import { UsageError } from '../usage-error.js'

/**
 * @internal `iddqueue check` compares the live schema with the migrations;
 * exit 1 on drift. Without `--plugins` it checks the plugins the ledger
 * records, loaded from the current directory as `--plugins` would load them.
 */
export const checkCommand: Command = {
  name: 'check',
  summary:
    'compare the live schema with the migrations of core and the plugins (--plugins, else those the ledger records; JSON; exit 1 on drift)',
  options: PLUGINS_OPTION,
  async run({ global, values }, io) {
    const cwd = io.cwd ?? process.cwd()
    const given = typeof values.plugins === 'string'
    // Load what --plugins names before any SQL: a bad name is a usage error.
    let owners = await migrationSets(values.plugins, cwd)
    const sql = postgres(global.url, { max: 1, onnotice: () => {} })
    try {
      const ledger = await readLedgerOwners(sql, global)
      // Without a ledger every table would be a difference: say what is wrong instead.
      if (!ledger) throw new SchemaNotReadyError('no migration ledger')
      if (!given) {
        const plugins = ledger.owners.filter((owner) => owner !== '@iddqueue/core')
        if (plugins.length > 0) owners = await ledgerPlugins(plugins, cwd)
      }
      const result = await checkSchema(sql, {
        namespace: { schema: global.schema, prefix: global.prefix },
        owners,
      })
      printJson(io, result)
      return result.ok ? EXIT.ok : EXIT.failed
    } finally {
      await sql.end()
    }
  },
}

/** The migration sets of the plugins a ledger records, or a usage error saying which --plugins to pass. */
async function ledgerPlugins(plugins: readonly string[], cwd: string) {
  try {
    return await migrationSets(plugins.join(','), cwd)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new UsageError(
      `the ledger records migrations of ${plugins.join(', ')}, which could not be loaded from ${cwd} (${reason}); install them there or pass --plugins ${plugins.join(',')} with their paths`,
      { cause: error },
    )
  }
}
