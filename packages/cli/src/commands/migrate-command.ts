import { migrate } from '@iddqueue/schema'
import postgres from 'postgres'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'

/** @internal `iddqueue migrate` applies pending migrations and prints `{ "applied": [...] }`. */
export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'apply pending migrations under an advisory lock (JSON; progress on stderr)',
  async run({ global }, io) {
    const sql = postgres(global.url, { max: 1, onnotice: () => {} })
    try {
      const result = await migrate(sql, {
        namespace: { schema: global.schema, prefix: global.prefix },
        onMigration: (m) => io.err(`applying ${m.owner} #${m.version} ${m.name}\n`),
      })
      printJson(io, result)
      return EXIT.ok
    } finally {
      await sql.end()
    }
  },
}
