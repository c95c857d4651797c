import { generateInitSql, generateUpgradeSql } from '@iddqueue/schema'
import postgres from 'postgres'
import type { CliIo } from '../cli-io.js'
import { EXIT } from '../cli-io.js'
import type { GlobalOptions } from '../global-options.js'

/** `iddqueue sql init` prints the whole schema; `iddqueue sql upgrade --url` only what the database lacks. */
export async function sqlCommand(
  args: readonly string[],
  options: GlobalOptions,
  io: CliIo,
): Promise<number> {
  const [what] = args
  const namespace = { schema: options.schema, prefix: options.prefix }
  if (what === 'init') {
    io.out(generateInitSql({ namespace }))
    return EXIT.ok
  }
  if (what === 'upgrade') {
    const sql = postgres(options.url, { max: 1, onnotice: () => {} })
    try {
      io.out(await generateUpgradeSql(sql, { namespace }))
    } finally {
      await sql.end()
    }
    return EXIT.ok
  }
  io.err(`iddqueue sql: expected "init" or "upgrade", got ${JSON.stringify(what ?? '')}\n`)
  return EXIT.usage
}
