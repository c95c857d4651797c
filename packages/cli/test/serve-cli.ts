import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { waitFor } from '@iddqueue/testing'

const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url))

/** A long-running CLI command in a child process, listening. */
export interface ServedCli {
  /** What it printed on stderr so far. */
  stderr(): string
  /** Sends SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>
  /** SIGKILL, for a `finally`: nothing is left running after a failed assertion. */
  kill(): void
}

/**
 * Starts `iddqueue <args>` (a server: `dashboard`, `metrics serve`) from
 * the built bin, with this process's environment minus DATABASE_URL (the
 * test passes `--url`), and resolves once it prints that SIGTERM stops it.
 */
export async function serveCli(args: readonly string[], what: string): Promise<ServedCli> {
  const { DATABASE_URL: _, ...env } = process.env
  const child = spawn(process.execPath, [BIN, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  const served: ServedCli = {
    stderr: () => stderr,
    stop: () => {
      child.kill('SIGTERM')
      return exited
    },
    kill: () => void child.kill('SIGKILL'),
  }
  try {
    await waitFor(() => stderr.includes('SIGTERM or SIGINT stops it'), {
      timeoutMs: 30_000,
      intervalMs: 50,
      message: what,
    })
  } catch (error) {
    served.kill()
    throw error
  }
  return served
}
