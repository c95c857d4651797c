import { checkSchema, migrate } from '@iddqueue/schema'
import postgres from 'postgres'
import type { CliIo } from '../cli-io.js'
import { EXIT } from '../cli-io.js'
import type { GlobalOptions } from '../global-options.js'

/** `iddqueue migrate` applies pending migrations and prints `{ "applied": [...] }`. */
export async function migrateCommand(options: GlobalOptions, io: CliIo): Promise<number> {
  const sql = postgres(options.url, { max: 1, onnotice: () => {} })
  try {
    const result = await migrate(sql, {
      namespace: { schema: options.schema, prefix: options.prefix },
      onMigration: (m) => io.err(`applying ${m.owner} #${m.version} ${m.name}\n`),
    })
    io.out(`${JSON.stringify(result)}\n`)
    return EXIT.ok
  } finally {
    await sql.end()
  }
}

/** `iddqueue check` compares the live schema with the migrations; exit 1 on drift. */
export async function checkCommand(options: GlobalOptions, io: CliIo): Promise<number> {
  const sql = postgres(options.url, { max: 1, onnotice: () => {} })
  try {
    const result = await checkSchema(sql, {
      namespace: { schema: options.schema, prefix: options.prefix },
    })
    io.out(`${JSON.stringify(result)}\n`)
    return result.ok ? EXIT.ok : EXIT.failed
  } finally {
    await sql.end()
  }
}
