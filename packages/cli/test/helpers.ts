import { type Broker, createBroker } from '@iddqueue/core'
import { messageStates } from '@iddqueue/testing'
import { useBrokerFixture } from '@iddqueue/testing/vitest'
import type postgres from 'postgres'
import { type CliIo, main } from '../src/index.js'

/** What a CLI run printed and returned. */
export interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  /** stdout parsed as JSON. */
  json<T = Record<string, unknown>>(): T
}

/** Runs the CLI in-process with captured output, the given environment and working directory. */
export async function runCli(
  argv: readonly string[],
  env: Record<string, string | undefined> = {},
  cwd?: string,
): Promise<CliRun> {
  let stdout = ''
  let stderr = ''
  const io: CliIo = {
    out: (text) => {
      stdout += text
    },
    err: (text) => {
      stderr += text
    },
    env,
    cwd,
  }
  const code = await main(argv, io)
  return { code, stdout, stderr, json: () => JSON.parse(stdout) }
}

/**
 * The test file's database, migrated once; a postgres.js client for
 * assertions; brokers closed after each test (the shared fixture of
 * `@iddqueue/testing`, which fails a test that leaves an iddqueue connection
 * open, the CLI's included); and `cli(...)`, which runs the CLI against the
 * database.
 */
export function setupDatabase() {
  const fixture = useBrokerFixture(createBroker, { migrate: true })
  return Object.assign(fixture, {
    /** Runs the CLI with `--url` set to the test database. */
    cli(...argv: string[]): Promise<CliRun> {
      return runCli(['--url', fixture.url, ...argv])
    },
  })
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export { uniqueQueue } from '@iddqueue/testing'

/** Rows of one queue by state, as { state: count }. */
export function states(sql: postgres.Sql, queue: string): Promise<Record<string, number>> {
  return messageStates(sql, { queue })
}

/**
 * Sends `count` messages to an actor that always fails, without retries,
 * and runs a worker until they are all rejected. Returns their ids in order.
 */
export async function rejectMessages(broker: Broker, queue: string, count = 1): Promise<string[]> {
  const actor = broker.actor(
    `fails_${queue}`,
    (n: number) => {
      throw new TypeError(`boom ${n}`)
    },
    { queue, maxRetries: 0 },
  )
  const sent = await broker.enqueueMany(Array.from({ length: count }, (_, i) => actor.message(i)))
  const worker = broker.worker({ queues: [queue] })
  await worker.start()
  await broker.join({ queues: [queue] })
  await worker.stop()
  return sent.map((message) => message.id)
}
