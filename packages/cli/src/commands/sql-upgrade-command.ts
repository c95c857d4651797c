import { generateUpgradeSql } from '@iddqueue/schema'
import postgres from 'postgres'
import { EXIT } from '../cli-io.js'
import type { Command } from '../command.js'

/** @internal `iddqueue sql upgrade` prints only the migrations the database lacks. */
export const sqlUpgradeCommand: Command = {
  name: 'sql upgrade',
  summary: 'print only the migrations the database lacks, as SQL',
  async run({ global }, io) {
    const sql = postgres(global.url, { max: 1, onnotice: () => {} })
    try {
      const namespace = { schema: global.schema, prefix: global.prefix }
      io.out(await generateUpgradeSql(sql, { namespace }))
      return EXIT.ok
    } finally {
      await sql.end()
    }
  },
}
