import { existsSync } from 'node:fs'
import { chmod, mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { isProcessAlive } from '../internal/process-alive.js'
import { TestDatabaseError } from '../test-database-error.js'
import { loadEmbeddedPostgres } from './load-embedded-postgres.js'
import {
  killPostmaster,
  postmasterPid,
  STOP_TIMEOUT_MS,
  stopServer,
  withTimeout,
} from './postmaster.js'

/**
 * Where `startDevDatabase` keeps its data and listens.
 *
 * @example
 * const options: StartDevDatabaseOptions = { dataDir: '.iddqueue/dev-db', port: 54320 }
 */
export interface StartDevDatabaseOptions {
  /** The data directory, created (initdb) when empty and kept across runs. */
  readonly dataDir: string
  /** The TCP port on 127.0.0.1. */
  readonly port: number
  /** Server output, for diagnostics. Default: discarded. */
  readonly onLog?: ((message: string) => void) | undefined
}

/**
 * A running development PostgreSQL from `startDevDatabase`.
 *
 * @example
 * const db: DevDatabase = await startDevDatabase({ dataDir: '.iddqueue/dev-db', port: 54320 })
 * console.log(db.url)
 * await db.stop()
 */
export interface DevDatabase {
  /** `postgres://postgres:postgres@127.0.0.1:PORT/postgres`. */
  readonly url: string
  /** The postmaster's pid. */
  readonly pid: number | undefined
  /** Whether `dataDir` was initialised by this start. */
  readonly created: boolean
  /** A fast shutdown that keeps the data directory. */
  stop(): Promise<void>
}

const user = 'postgres'
const password = 'postgres'
const startTimeoutMs = 60_000

/**
 * Starts a local PostgreSQL (embedded-postgres, the server this package's
 * embedded test mode uses) whose data stays in `dataDir` across runs: for
 * development, where the test mode's server is disposable. It listens on
 * 127.0.0.1 only, with a fixed password (`postgres`), so it is not for
 * anything reachable from elsewhere. As root, PostgreSQL runs as user
 * postgres (created if needed), which must be able to enter `dataDir`.
 *
 * `stop()` shuts the server down (fast shutdown) and keeps the data. The
 * caller stops it on its own signals; nothing here installs handlers.
 *
 * @example
 * const db = await startDevDatabase({ dataDir: '.iddqueue/dev-db', port: 54320 })
 * process.once('SIGINT', () => void db.stop())
 */
export async function startDevDatabase(options: StartDevDatabaseOptions): Promise<DevDatabase> {
  const EmbeddedPostgresClass = await loadEmbeddedPostgres()
  const dataDir = resolve(options.dataDir)
  await mkdir(dataDir, { recursive: true })
  await chmod(dataDir, 0o700)
  let output = ''
  const log = (message: string) => {
    output = (output + message).slice(-4_000)
    options.onLog?.(message)
  }
  const server = new EmbeddedPostgresClass({
    databaseDir: dataDir,
    port: options.port,
    user,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--no-locale'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message) => log(String(message)),
    onError: (error) => log(`${String(error)}\n`),
  })
  const created = !existsSync(join(dataDir, 'PG_VERSION'))
  const stale = await postmasterPid(dataDir)
  if (stale !== undefined && isProcessAlive(stale)) {
    throw new TestDatabaseError(
      `a PostgreSQL (pid ${stale}) is already running on the data directory ${dataDir}`,
    )
  }
  try {
    if (created) await server.initialise()
    await withTimeout(server.start(), startTimeoutMs, 'start')
  } catch (error) {
    await killPostmaster(await postmasterPid(dataDir)).catch(() => {})
    const reason = error instanceof Error ? error.message : 'PostgreSQL exited'
    const asRoot =
      process.getuid?.() === 0
        ? '; as root, PostgreSQL runs as user postgres, which must be able to enter every directory above it'
        : ''
    throw new TestDatabaseError(
      `could not start PostgreSQL (data directory ${dataDir}${asRoot}, port ${options.port}): ${reason}\n${output.trim()}`,
      { cause: error },
    )
  }
  const pid = await postmasterPid(dataDir)
  let stopping: Promise<void> | undefined
  return {
    url: `postgres://${user}:${password}@127.0.0.1:${options.port}/postgres`,
    pid,
    created,
    stop: () => {
      stopping ??= (async () => {
        // A terminal's Ctrl-C may have reached the postmaster too: it is then shutting down already.
        const deadline = Date.now() + STOP_TIMEOUT_MS
        if (pid !== undefined && isProcessAlive(pid)) {
          try {
            process.kill(pid, 'SIGINT')
          } catch {
            // Exited meanwhile.
          }
        }
        while (pid !== undefined && isProcessAlive(pid) && Date.now() < deadline) await sleep(20)
        await stopServer(server, pid)
      })()
      return stopping
    },
  }
}
