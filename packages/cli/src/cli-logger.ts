import type { Logger } from '@iddqueue/core'
import type { CliIo } from './cli-io.js'

/** @internal The broker's warnings and errors, as lines on the CLI's stderr. */
export function cliLogger(io: CliIo): Logger {
  const line = (level: string) => (message: string, fields?: Readonly<Record<string, unknown>>) => {
    const details = fields && Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : ''
    io.err(`iddqueue: ${level}: ${message}${details}\n`)
  }
  return { debug: () => {}, info: () => {}, warn: line('warning'), error: line('error') }
}
