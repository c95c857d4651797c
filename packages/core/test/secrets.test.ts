import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { BrokerConnectionError, createBroker, type Logger } from '../src/index.js'

// A password in a connection URL must never reach a log line, an error
// message, an error's cause or anything inspect() shows of them.
const SECRET = `s3cret-${crypto.randomUUID()}`

function capturingLogger(lines: string[]): Logger {
  const at = (level: string) => (message: string, fields?: unknown) => {
    lines.push(`${level} ${message} ${inspect(fields, { depth: 6 })}`)
  }
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

function expectNoSecret(value: unknown): void {
  const text = `${inspect(value, { depth: 8, showHidden: true })} ${String((value as Error)?.message)} ${JSON.stringify(value, Object.getOwnPropertyNames(value ?? {}))}`
  expect(text).not.toContain(SECRET)
  expect(text).not.toContain(encodeURIComponent(SECRET))
}

describe('a connection URL with a password', () => {
  it('never shows the password in errors or logs when PostgreSQL is unreachable', async () => {
    const lines: string[] = []
    const url = `postgres://someone:${SECRET}@127.0.0.1:1/nothing`
    const broker = createBroker({ url, logger: capturingLogger(lines), sendTimeoutMs: 2_000 })
    const actor = broker.actor('a', () => {})
    const sent = await actor.send().catch((e: unknown) => e)
    expect(BrokerConnectionError.isInstance(sent)).toBe(true)
    expectNoSecret(sent)
    expectNoSecret((sent as Error).cause)
    const started = await broker
      .worker()
      .start()
      .catch((e: unknown) => e)
    expect(BrokerConnectionError.isInstance(started)).toBe(true)
    expectNoSecret(started)
    await broker.close()
    for (const line of lines) expect(line).not.toContain(SECRET)
  })

  it('never shows it when the URL itself is malformed', () => {
    for (const url of [
      `postgres://someone:${SECRET}@[::1/nothing`,
      `postgres://someone:${SECRET}@host:notaport/db`,
      `mysql://someone:${SECRET}@host/db`,
      `postgres://someone:${SECRET}@host/db?sslmode=${SECRET}`,
    ]) {
      let error: unknown
      try {
        createBroker({ url })
      } catch (e) {
        error = e
      }
      if (error !== undefined) expectNoSecret(error)
    }
  })
})
