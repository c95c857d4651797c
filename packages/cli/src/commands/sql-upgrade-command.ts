import { generateUpgradeSql } from '@iddqueue/schema'
import postgres from 'postgres'
import { EXIT } from '../cli-io.js'
import type { Command } from '../command.js'
import { migrationSets, PLUGINS_OPTION } from '../plugin-migrations.js'

/** @internal `iddqueue sql upgrade` prints only the migrations the database lacks. */
export const sqlUpgradeCommand: Command = {
  name: 'sql upgrade',
  summary: 'print only the migrations the database lacks, as SQL',
  options: PLUGINS_OPTION,
  async run({ global, values }, io) {
    const owners = await migrationSets(values.plugins, io.cwd ?? process.cwd())
    const sql = postgres(global.url, { max: 1, onnotice: () => {} })
    try {
      const namespace = { schema: global.schema, prefix: global.prefix }
      io.out(await generateUpgradeSql(sql, { namespace, owners }))
      return EXIT.ok
    } finally {
      await sql.end()
    }
  },
}
