import { generateInitSql } from '@iddqueue/schema'
import { EXIT } from '../cli-io.js'
import type { Command } from '../command.js'

/** @internal `iddqueue sql init` prints the whole schema as SQL; it needs no database. */
export const sqlInitCommand: Command = {
  name: 'sql init',
  summary: 'print the whole schema as SQL, for a DBA to review and apply',
  database: false,
  async run({ global }, io) {
    io.out(generateInitSql({ namespace: { schema: global.schema, prefix: global.prefix } }))
    return EXIT.ok
  },
}
