import { generateUpgradeSql } from '@iddqueue/schema'
import postgres from 'postgres'
import { EXIT } from '../cli-io.js'
import type { Command } from '../command.js'
import { readLedgerOwners } from '../ledger-owners.js'
import { migrationSets, PLUGINS_OPTION } from '../plugin-migrations.js'

/**
 * @internal `iddqueue sql upgrade` prints only the migrations the database
 * lacks, or an SQL comment saying there are none.
 */
export const sqlUpgradeCommand: Command = {
  name: 'sql upgrade',
  summary: 'print only the migrations the database lacks, as SQL (a comment when it is up to date)',
  options: PLUGINS_OPTION,
  async run({ global, values }, io) {
    const owners = await migrationSets(values.plugins, io.cwd ?? process.cwd())
    const sql = postgres(global.url, { max: 1, onnotice: () => {} })
    try {
      const ledger = await readLedgerOwners(sql, global)
      const pending = owners.flatMap((set) =>
        set.migrations.filter((m) => !ledger?.applied.has(`${set.owner}#${m.version}`)),
      )
      if (ledger && pending.length === 0) {
        // Still valid SQL, so `sql upgrade | psql` stays harmless.
        const names = owners.map((set) => set.owner).join(', ')
        io.out(
          `-- nothing to apply: schema ${JSON.stringify(global.schema)} is up to date (${names})\n`,
        )
        return EXIT.ok
      }
      const namespace = { schema: global.schema, prefix: global.prefix }
      io.out(await generateUpgradeSql(sql, { namespace, owners }))
      return EXIT.ok
    } finally {
      await sql.end()
    }
  },
}
