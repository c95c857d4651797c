import { checkSchema } from '@iddqueue/schema'
import postgres from 'postgres'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { migrationSets, PLUGINS_OPTION } from '../plugin-migrations.js'

/** @internal `iddqueue check` compares the live schema with the migrations; exit 1 on drift. */
export const checkCommand: Command = {
  name: 'check',
  summary:
    'compare the live schema with the migrations of core and the --plugins packages (JSON; exit 1 on drift)',
  options: PLUGINS_OPTION,
  async run({ global, values }, io) {
    const owners = await migrationSets(values.plugins, io.cwd ?? process.cwd())
    const sql = postgres(global.url, { max: 1, onnotice: () => {} })
    try {
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
