import { type ChildProcess, spawn } from 'node:child_process'
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '../embedded/free-port.js'
import { parseServerUrl, redactUrl } from '../internal/database-url.js'
import { TestDatabaseError } from '../test-database-error.js'

/**
 * Options of {@link startPgBouncer}.
 *
 * @example
 * const options: StartPgBouncerOptions = { serverUrl: 'postgres://root@127.0.0.1:5432/test', poolMode: 'transaction' }
 */
export interface StartPgBouncerOptions {
  /** The PostgreSQL server PgBouncer connects to (its credentials are used for every database). */
  readonly serverUrl: string
  /** `'transaction'` (default: what production poolers run) or `'session'`. */
  readonly poolMode?: 'transaction' | 'session' | undefined
  /** Server connections per (database, user) pair. Default 20. */
  readonly defaultPoolSize?: number | undefined
  /** The `pgbouncer` binary. Default: the first found on `PATH`, then `/usr/sbin/pgbouncer`. */
  readonly binary?: string | undefined
  /** How long to wait for PgBouncer to accept connections. Default 10,000 ms. */
  readonly startTimeoutMs?: number | undefined
}

/**
 * A running PgBouncer started by {@link startPgBouncer}.
 *
 * @example
 * const bouncer = await startPgBouncer({ serverUrl })
 * const sql = postgres(bouncer.url('mydb'), { prepare: false })
 */
export interface PgBouncer {
  /** The port PgBouncer listens on, on 127.0.0.1. */
  readonly port: number
  /** The PgBouncer process id. */
  readonly pid: number
  /** A URL to `database` through PgBouncer (no credentials needed: PgBouncer logs in for you). */
  url(database: string): string
  /** Stops PgBouncer and removes its files. Safe to call twice. */
  stop(): Promise<void>
}

/**
 * The `pgbouncer` binary on this machine, or `undefined` when none is
 * installed (`apt-get install pgbouncer` on Debian).
 *
 * @example
 * const binary = findPgBouncer()
 * it.skipIf(binary === undefined)('works through PgBouncer', async () => {})
 */
export function findPgBouncer(): string | undefined {
  const candidates = [
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'pgbouncer')),
    '/usr/sbin/pgbouncer',
  ]
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/**
 * Starts a private PgBouncer on a free port of 127.0.0.1 in front of
 * `serverUrl`, for tests that must run through a pooler as production does:
 * transaction pooling by default, every database name routed to the same
 * server with the URL's credentials. It is stopped by `stop()` or when the
 * process exits.
 *
 * Clients must not use server-side prepared statements through it (PgBouncer
 * before 1.21 does not track them): postgres.js needs `prepare: false`.
 *
 * @example
 * import { startPgBouncer } from '@iddqueue/testing'
 *
 * const bouncer = await startPgBouncer({ serverUrl: 'postgres://root@127.0.0.1:5432/test' })
 * try {
 *   const broker = createBroker({ url: bouncer.url('app'), prepare: false, listenUrl: directUrl })
 * } finally {
 *   await bouncer.stop()
 * }
 */
export async function startPgBouncer(options: StartPgBouncerOptions): Promise<PgBouncer> {
  const server = parseServerUrl(options.serverUrl, 'startPgBouncer option `serverUrl`')
  const binary = options.binary ?? findPgBouncer()
  if (binary === undefined) {
    throw new TestDatabaseError(
      'no pgbouncer binary found on PATH or at /usr/sbin/pgbouncer (apt-get install pgbouncer)',
    )
  }
  const poolSize = options.defaultPoolSize ?? 20
  if (!Number.isSafeInteger(poolSize) || poolSize < 1) {
    throw new TestDatabaseError(
      `startPgBouncer option \`defaultPoolSize\` must be a positive integer, got ${poolSize}`,
    )
  }
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'iddqueue-pgbouncer-'))
  // PgBouncer refuses to run as root; as root it is started with `-u nobody`,
  // which must be able to write its log into this directory.
  chmodSync(dir, 0o777)
  const target = [
    `host=${server.hostname}`,
    `port=${server.port || '5432'}`,
    `user=${decodeURIComponent(server.username || 'postgres')}`,
    ...(server.password === '' ? [] : [`password=${decodeURIComponent(server.password)}`]),
  ].join(' ')
  const config = join(dir, 'pgbouncer.ini')
  writeFileSync(
    config,
    [
      '[databases]',
      `* = ${target}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      `pool_mode = ${options.poolMode ?? 'transaction'}`,
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 1000',
      'ignore_startup_parameters = extra_float_digits,search_path',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
    { mode: 0o644 },
  )

  const asRoot = process.getuid?.() === 0
  const child = spawn(binary, [...(asRoot ? ['-u', 'nobody'] : []), config], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  let spawnError: Error | undefined
  child.once('error', (error) => {
    spawnError = error
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)

  let stopped: Promise<void> | undefined
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      process.removeListener('exit', killOnExit)
      await terminate(child)
      rmSync(dir, { recursive: true, force: true })
    })()
    return stopped
  }

  try {
    await waitForPort(port, child, () => spawnError, options.startTimeoutMs ?? 10_000)
  } catch (error) {
    await stop()
    throw new TestDatabaseError(
      `pgbouncer did not start in front of ${redactUrl(options.serverUrl)}: ${(error as Error).message}${stderr ? `\n${stderr.trim()}` : ''}`,
      { cause: error },
    )
  }

  return {
    port,
    pid: child.pid as number,
    url(database) {
      return `postgres://${encodeURIComponent(decodeURIComponent(server.username || 'postgres'))}@127.0.0.1:${port}/${encodeURIComponent(database)}`
    },
    stop,
  }
}

async function waitForPort(
  port: number,
  child: ChildProcess,
  spawnError: () => Error | undefined,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const error = spawnError()
    if (error !== undefined) throw error
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`it exited with ${child.exitCode ?? child.signalCode}`)
    }
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (open) return
    await sleep(25)
  }
  throw new Error(`port ${port} did not accept connections within ${timeoutMs} ms`)
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM') // PgBouncer: immediate shutdown
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
  await exited
  clearTimeout(timer)
}
