import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { type Broker, createBroker } from '@iddqueue/core'
import { drainWithWorker, waitFor } from '@iddqueue/testing'
import { useBrokerFixture } from '@iddqueue/testing/vitest'

export { uniqueQueue } from '@iddqueue/testing'

/**
 * The test file's database, a postgres.js client for assertions, and brokers
 * closed after each test: the shared fixture of `@iddqueue/testing`, whose
 * afterEach fails when a test leaves a worker, pool or listener open.
 */
export function setupDatabase() {
  return useBrokerFixture(createBroker)
}

/** Resolves when `check` returns true, or fails after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
) {
  await waitFor(check, { timeoutMs, intervalMs: 10, message: what })
}

/** Runs a worker on `queues` until they hold no queued or running message, then stops it. */
export function drain(broker: Broker, queues: string[], concurrency = 4) {
  return drainWithWorker(broker, { queues, concurrency })
}

/** The error a promise rejects with (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  let value: unknown
  try {
    value = await promise
  } catch (error) {
    return error
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`)
}

/** Forks a fixture script with arguments; resolves with its messages once it exits with code 0. */
export function runChild<T>(
  script: string,
  args: readonly string[],
  onMessage: (message: T) => void = () => {},
): {
  done: Promise<T[]>
  kill: (signal: NodeJS.Signals) => void
  send: (message: string) => void
} {
  const child = fork(fileURLToPath(new URL(`./fixtures/${script}`, import.meta.url)), [...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const messages: T[] = []
  child.on('message', (message: T) => {
    messages.push(message)
    onMessage(message)
  })
  const done = new Promise<T[]>((resolve, reject) => {
    child.on('exit', (code, signal) => {
      if (code === 0) resolve(messages)
      else reject(new Error(`${script} exited with ${code ?? signal}`))
    })
  })
  return { done, kill: (signal) => child.kill(signal), send: (message) => child.send(message) }
}

/** A gate handlers wait on (`passed`) until the test calls `open()`. */
export function gate(): { passed: Promise<void>; open: () => void } {
  let open!: () => void
  const passed = new Promise<void>((resolve) => {
    open = resolve
  })
  return { passed, open }
}
