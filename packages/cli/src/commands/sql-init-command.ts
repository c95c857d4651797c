import { generateInitSql } from '@iddqueue/schema'
import { EXIT } from '../cli-io.js'
import type { Command } from '../command.js'
import { migrationSets, PLUGINS_OPTION } from '../plugin-migrations.js'

/** @internal `iddqueue sql init` prints the whole schema as SQL; it needs no database. */
export const sqlInitCommand: Command = {
  name: 'sql init',
  summary:
    'print the whole schema (core and the --plugins packages) as SQL, for a DBA to review and apply',
  database: false,
  options: PLUGINS_OPTION,
  async run({ global, values }, io) {
    const owners = await migrationSets(values.plugins, io.cwd ?? process.cwd())
    io.out(generateInitSql({ namespace: { schema: global.schema, prefix: global.prefix }, owners }))
    return EXIT.ok
  },
}
