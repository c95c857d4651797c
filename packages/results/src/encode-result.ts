import { encodeJson, InvalidPayloadError } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'

/** What a handler's result becomes in the `results` table. */
export type EncodedResult =
  | { readonly ok: true; readonly json: string | null }
  | { readonly ok: false; readonly problem: string }

/**
 * Encodes a handler's result for storage, or says why it cannot be stored:
 * by the rules message arguments follow (core's `encodeJson`).
 * `undefined` (a handler that returns nothing) is stored as SQL null and
 * reads back as `undefined`; `null` reads back as `null`.
 *
 * @example
 * encodeResult({ total: 3 }) // { ok: true, json: '{"total":3}' }
 * encodeResult(10n)          // { ok: false, problem: 'result is a BigInt, which does not survive JSON; ...' }
 */
export function encodeResult(value: unknown): EncodedResult {
  if (value === undefined) return { ok: true, json: null }
  try {
    return { ok: true, json: encodeJson(value, 'result') }
  } catch (error) {
    if (InvalidPayloadError.isInstance(error)) return { ok: false, problem: error.message }
    // A getter that throws, a proxy, a structure deep enough to overflow the stack.
    // It may throw anything: String() throws on an object without a prototype.
    const reason =
      error instanceof Error
        ? error.message
        : typeof error === 'string'
          ? error
          : describeValue(error)
    return { ok: false, problem: `result could not be read (${reason}), so it cannot be stored` }
  }
}
