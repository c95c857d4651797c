import { withContext } from '../errors.js'
import type { Message } from '../message/message.js'
import { assertPayloadSize, encodeArgs, encodeOptions } from '../message/message-codec.js'
import { assertEnqueueOptions, type EnqueueOptions } from './enqueue-options.js'

/** @internal A message checked and encoded, ready for the insert statement. */
export interface PreparedEntry {
  /** The message as returned to the caller (eta and priority applied). */
  readonly message: Message
  readonly argsJson: string
  readonly optionsJson: string
  readonly delayMs: number | null
  readonly etaMs: number | null
  readonly dedup:
    | { readonly key: string; readonly ttlMs: number; readonly replace: boolean }
    | undefined
}

const EMPTY_OPTIONS = '{}'

/**
 * @internal Validates and encodes one message with its send options, before
 * any SQL. Errors start with `where` (the send or the batch entry).
 */
export function prepareEntry(
  message: Message,
  options: EnqueueOptions,
  maxPayloadBytes: number,
  where: string,
): PreparedEntry {
  assertEnqueueOptions(options, where)
  try {
    const argsJson = encodeArgs(message.args)
    const optionsJson =
      Object.keys(message.options).length === 0 ? EMPTY_OPTIONS : encodeOptions(message.options)
    const size = argsJson.length + optionsJson.length
    // Only count UTF-8 bytes when the string could possibly be over the limit.
    if (size * 3 > maxPayloadBytes) {
      assertPayloadSize(
        message.actor,
        Buffer.byteLength(argsJson) + Buffer.byteLength(optionsJson),
        maxPayloadBytes,
      )
    }
    const etaMs =
      options.eta === undefined
        ? null
        : options.eta instanceof Date
          ? options.eta.getTime()
          : options.eta
    const delayMs = options.delayMs ?? null
    const eta =
      etaMs !== null ? new Date(etaMs) : delayMs ? new Date(Date.now() + delayMs) : undefined
    const changed =
      eta !== undefined || (options.priority !== undefined && options.priority !== message.priority)
    return {
      message: changed
        ? message.with({ eta, priority: options.priority ?? message.priority })
        : message,
      argsJson,
      optionsJson,
      delayMs,
      etaMs,
      dedup:
        options.dedupKey === undefined
          ? undefined
          : {
              key: options.dedupKey,
              ttlMs: options.dedupTtlMs as number,
              replace: options.dedupMode === 'replace',
            },
    }
  } catch (error) {
    throw withContext(error, where)
  }
}
