import {
  InvalidOptionError,
  type Message,
  type NotificationWaiters,
  type ResultOptions,
  type ResultReader,
} from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import {
  ResultCancelled,
  ResultFailure,
  ResultMissing,
  ResultTimeout,
  type StoredFailure,
} from './errors.js'
import type { ResultLoader, StoredResult } from './result-loader.js'

/** Default of `ResultOptions.timeoutMs`, as core documents it. */
const DEFAULT_TIMEOUT_MS = 10_000
/** With LISTEN, a blocked waiter still reads again this often, in case a notification was lost. */
export const RECHECK_MS = 5_000

function resultOptions(options: ResultOptions): { block: boolean; timeoutMs: number } {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('Invalid result() options: expected an object')
  }
  const { block = true, timeoutMs = DEFAULT_TIMEOUT_MS } = options
  if (typeof block !== 'boolean') {
    throw new InvalidOptionError(`Invalid block ${describeValue(block)}: expected true or false`)
  }
  if (typeof timeoutMs !== 'number' || !Number.isSafeInteger(timeoutMs) || timeoutMs < 0) {
    throw new InvalidOptionError(
      `Invalid timeoutMs ${describeValue(timeoutMs)}: expected an integer of 0 or more (milliseconds)`,
    )
  }
  return { block, timeoutMs }
}

function parseFailure(text: string | null, fallback: StoredFailure): StoredFailure {
  if (text === null) return fallback
  const record = JSON.parse(text) as Partial<StoredFailure>
  return {
    type: String(record.type ?? fallback.type),
    message: String(record.message ?? fallback.message),
    at: String(record.at ?? fallback.at),
    attempt: typeof record.attempt === 'number' ? record.attempt : fallback.attempt,
  }
}

/** The value of a stored result, or the error it stands for. */
function settle(message: Message, result: StoredResult): { found: boolean; value?: unknown } {
  switch (result.status) {
    case 'missing':
      return { found: false }
    case 'success':
      return { found: true, value: result.value === null ? undefined : JSON.parse(result.value) }
    case 'failure':
      throw new ResultFailure(
        message.id,
        parseFailure(result.failure, {
          type: 'Error',
          message: 'failed',
          at: new Date(0).toISOString(),
          attempt: 0,
        }),
      )
    case 'cancelled':
      throw new ResultCancelled(
        message.id,
        parseFailure(result.failure, {
          type: 'MessageCancelled',
          message: `Message ${message.id} was cancelled`,
          at: new Date(0).toISOString(),
          attempt: 0,
        }),
      )
  }
}

/**
 * @internal What `message.result()` calls: reads the result, and when it
 * is not there yet and the caller blocks, waits for a notification on the
 * result channel (or polls, without LISTEN) until `timeoutMs`.
 */
export function createResultReader(
  loader: ResultLoader,
  waiters: NotificationWaiters,
  pollIntervalMs: number,
): ResultReader {
  return async (message, options) => {
    const { block, timeoutMs } = resultOptions(options)
    if (!block) {
      const result = settle(message, await loader.load(message.id))
      if (result.found) return result.value
      throw new ResultMissing(
        message.id,
        `No result for message ${message.id} (actor ${message.actor}): it has not finished, its result expired, or its actor does not have storeResults`,
      )
    }
    const deadline = performance.now() + timeoutMs
    // Registered before the first read: a result stored after that read
    // wakes this waiter even if it lands before the wait begins.
    const waiter = await waiters.add(message.id)
    try {
      for (;;) {
        const result = settle(message, await loader.load(message.id))
        if (result.found) return result.value
        const remaining = deadline - performance.now()
        if (remaining <= 0) {
          throw new ResultTimeout(
            message.id,
            timeoutMs,
            `No result for message ${message.id} (actor ${message.actor}) after ${timeoutMs} ms`,
          )
        }
        await waiter.next(Math.min(remaining, waiter.notified ? RECHECK_MS : pollIntervalMs))
      }
    } finally {
      waiters.remove(waiter)
    }
  }
}
