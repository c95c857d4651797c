import type { LogFields, Logger } from '../../../src/index.js'

/** A logger that keeps every line, for assertions on what was logged. */
export function recordLogs() {
  const lines: { level: string; message: string; fields?: LogFields; at: number }[] = []
  const at =
    (level: string) =>
    (message: string, fields?: LogFields): void => {
      lines.push({ level, message, fields, at: performance.now() })
    }
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  }
  return {
    logger,
    lines,
    count: (pattern: RegExp) => lines.filter((l) => pattern.test(l.message)).length,
  }
}
