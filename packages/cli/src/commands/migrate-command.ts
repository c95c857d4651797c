import { migrate } from '@iddqueue/schema'
import postgres from 'postgres'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { migrationSets, PLUGINS_OPTION } from '../plugin-migrations.js'

/**
 * @internal `iddqueue migrate` applies pending migrations, core's and those of
 * the `--plugins` packages, and prints `{ "applied": [...] }`.
 */
export const migrateCommand: Command = {
  name: 'migrate',
  summary:
    'apply pending migrations of core and the --plugins packages under an advisory lock (JSON; progress on stderr)',
  options: PLUGINS_OPTION,
  async run({ global, values }, io) {
    const owners = await migrationSets(values.plugins, io.cwd ?? process.cwd())
    const sql = postgres(global.url, { max: 1, onnotice: () => {} })
    try {
      const result = await migrate(sql, {
        namespace: { schema: global.schema, prefix: global.prefix },
        owners,
        onMigration: (m) => io.err(`applying ${m.owner} #${m.version} ${m.name}\n`),
      })
      printJson(io, result)
      return EXIT.ok
    } finally {
      await sql.end()
    }
  },
}
