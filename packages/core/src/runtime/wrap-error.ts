import { IddqueueError } from '@iddqueue/schema'
import { BrokerConnectionError, SchemaNotReadyError } from '../errors.js'

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
])

/**
 * True when `error` means PostgreSQL is unreachable or the connection broke:
 * network errors, the server shutting down or restarting (57P01-57P03),
 * connection failures (class 08), too many connections (53300).
 *
 * @example
 * try {
 *   await add.send(1, 2)
 * } catch (error) {
 *   if (!isConnectionError(error)) throw error
 *   console.warn('PostgreSQL is unreachable; try again later')
 * }
 */
export function isConnectionError(error: unknown): boolean {
  if (BrokerConnectionError.isInstance(error)) return true
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string') {
    return (
      error instanceof Error && /Connection terminated|connection is closed/i.test(error.message)
    )
  }
  return (
    NETWORK_CODES.has(code) || code.startsWith('08') || code.startsWith('57P') || code === '53300'
  )
}

/**
 * @internal Turns driver errors into iddqueue's typed errors: connection
 * failures into {@link BrokerConnectionError}, a missing table into
 * {@link SchemaNotReadyError}. Other errors pass through.
 */
export function wrapError(error: unknown, doing: string): unknown {
  if (IddqueueError.isInstance(error)) return error
  if (isConnectionError(error)) {
    const reason = error instanceof Error ? error.message : String(error)
    return new BrokerConnectionError(`Could not ${doing}: PostgreSQL is unreachable (${reason})`, {
      cause: error,
    })
  }
  if ((error as { code?: unknown } | null)?.code === '42P01') {
    return new SchemaNotReadyError(
      `Could not ${doing}: the iddqueue tables do not exist; run broker.migrate() or apply generateInitSql() first`,
      { cause: error },
    )
  }
  return error
}
