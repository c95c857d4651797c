import { describeValue } from '@iddqueue/schema'

/**
 * @internal A caught error as text for a log line, an audit event or a bulk
 * operation's page: `Name: message` for an Error, and a safe rendering of
 * anything else a hook may throw (`String()` throws on an object without a
 * prototype, which turned a failed request into an unhandled rejection).
 *
 * @example
 * logger.error('dashboard: request failed', { error: describeError(error) })
 */
export function describeError(error: unknown): string {
  return error instanceof Error ? String(error) : describeValue(error)
}
