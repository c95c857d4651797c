import { spawn } from 'node:child_process'
import { TestDatabaseError } from '../test-database-error.js'
import { watchdogScript } from './watchdog-script.js'

/**
 * A running watchdog process; `stop()` ends it.
 *
 * @internal
 */
export interface Watchdog {
  readonly pid: number
  stop(): void
}

/**
 * Starts a detached process that outlives this one and, when this process
 * dies without `stop()` (SIGKILL, a crash, an OOM kill), kills the embedded
 * postmaster of `dataDir` and removes `dataDir`. See {@link watchdogScript}.
 *
 * @internal
 */
export function spawnWatchdog(dataDir: string): Watchdog {
  // Loaders and flags meant for this process (tsx, vitest) would only slow
  // the watchdog down, or break it.
  const { NODE_OPTIONS: _, ...env } = process.env
  const child = spawn(process.execPath, ['-e', watchdogScript, String(process.pid), dataDir], {
    detached: true,
    stdio: 'ignore',
    env,
  })
  child.unref()
  // A failed spawn reports through 'error' too; without a listener it would crash.
  child.on('error', () => {})
  if (child.pid === undefined) {
    throw new TestDatabaseError(
      `could not start the embedded PostgreSQL watchdog process with ${process.execPath}`,
    )
  }
  const pid = child.pid
  return {
    pid,
    stop: () => {
      try {
        process.kill(pid, 'SIGTERM')
      } catch {
        // Already gone.
      }
    },
  }
}
