import { checkSchema } from '@iddqueue/schema'
import postgres from 'postgres'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'

/** @internal `iddqueue check` compares the live schema with the migrations; exit 1 on drift. */
export const checkCommand: Command = {
  name: 'check',
  summary: 'compare the live schema with the migrations (JSON; exit 1 on drift)',
  async run({ global }, io) {
    const sql = postgres(global.url, { max: 1, onnotice: () => {} })
    try {
      const result = await checkSchema(sql, {
        namespace: { schema: global.schema, prefix: global.prefix },
      })
      printJson(io, result)
      return result.ok ? EXIT.ok : EXIT.failed
    } finally {
      await sql.end()
    }
  },
}
