import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { waitFor } from '../../src/index.js'
import { processesMentioning, processRuns, tcpConnect, withSql } from '../helpers.js'

const fixture = fileURLToPath(new URL('../fixtures/start-embedded.mjs', import.meta.url))
const built = fileURLToPath(new URL('../../dist/index.js', import.meta.url))

interface Started {
  url: string
  dataDir: string
  postmasterPid: number
}

function startChild(how: string): Promise<{ child: ChildProcess; started: Started }> {
  const child = spawn(process.execPath, [fixture, how], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stderr?.on('data', (chunk) => {
    stderr += chunk
  })
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk) => {
      stdout += chunk
      const line = stdout.split('\n')[0]
      if (stdout.includes('\n') && line !== undefined) resolve({ child, started: JSON.parse(line) })
    })
    child.once('exit', (code) => reject(new Error(`fixture exited (${code}) early: ${stderr}`)))
  })
}

function exited(child: ChildProcess): Promise<NodeJS.Signals | number | null> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.signalCode ?? child.exitCode)
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)))
}

describe('no orphan PostgreSQL', () => {
  it('needs the built package', () => {
    expect(existsSync(built), `run pnpm build first: ${built} is missing`).toBe(true)
  })

  it.each([
    ['sigkill', 'SIGKILL'],
    ['sigterm', 'SIGTERM'],
    ['exit', 0],
  ] as const)('cleans up after a child that ends by %s', async (how, ending) => {
    const { child, started } = await startChild(how)
    const port = Number(new URL(started.url).port)
    const rows = await withSql(started.url, (sql) => sql`select 1 as one`)
    expect(rows[0]?.one).toBe(1)
    expect(processRuns(started.postmasterPid)).toBe(true)

    child.kill(how === 'sigkill' ? 'SIGKILL' : how === 'sigterm' ? 'SIGTERM' : 'SIGUSR2')
    expect(await exited(child)).toBe(ending)

    await waitFor(
      async () =>
        !processRuns(started.postmasterPid) &&
        !existsSync(started.dataDir) &&
        (await tcpConnect(port)) === 'ECONNREFUSED',
      { timeoutMs: 8_000, intervalMs: 100, message: 'the orphaned postmaster to go' },
    )
    // The watchdog is gone too.
    await waitFor(() => processesMentioning(started.dataDir).length === 0, {
      timeoutMs: 3_000,
      message: `no process mentioning ${started.dataDir}`,
    })
  })
})
