import { describeValue } from '@iddqueue/schema'
/**
 * Structured fields attached to a log line.
 *
 * @example
 * const fields: LogFields = { queue: 'emails', durationMs: 1_250 }
 * logger.warn('slow handler', fields)
 */
export type LogFields = Readonly<Record<string, unknown>>

/**
 * Where iddqueue writes what it does. Any object with these four methods
 * works (pino and winston loggers do, with a small adapter for argument order).
 *
 * @example
 * const broker = createBroker({ url, logger: consoleLogger('info') })
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void
  info(message: string, fields?: LogFields): void
  warn(message: string, fields?: LogFields): void
  error(message: string, fields?: LogFields): void
}

/**
 * A log level, from the most to the least verbose.
 *
 * @example
 * const level: LogLevel = process.env.NODE_ENV === 'production' ? 'warn' : 'debug'
 * const broker = createBroker({ url, logger: consoleLogger(level) })
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 }

function render(fields: LogFields | undefined): string {
  if (!fields) return ''
  const parts = Object.entries(fields).map(([key, value]) => `${key}=${fieldText(value)}`)
  return parts.length ? ` ${parts.join(' ')}` : ''
}

/** A field's text; never throws (a thrown bigint or prototype-less object reaches the log too). */
function fieldText(value: unknown): string {
  if (typeof value === 'string') return value
  if (value instanceof Error) return `${text(value.name)}: ${text(value.message)}`
  try {
    return JSON.stringify(value) ?? describeValue(value)
  } catch {
    return describeValue(value)
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : describeValue(value)
}

/**
 * A logger that writes `[iddqueue] level message key=value` lines to stderr,
 * dropping lines below `level`. The default logger is `consoleLogger('warn')`.
 *
 * @example
 * const broker = createBroker({ url, logger: consoleLogger('debug') })
 */
export function consoleLogger(level: LogLevel = 'warn'): Logger {
  const threshold = LEVELS[level]
  const line = (name: Exclude<LogLevel, 'silent'>) => (message: string, fields?: LogFields) => {
    if (LEVELS[name] >= threshold)
      process.stderr.write(`[iddqueue] ${name} ${message}${render(fields)}\n`)
  }
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') }
}
