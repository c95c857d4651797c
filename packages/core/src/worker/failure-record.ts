import { describeValue, type FailureRecord } from '@iddqueue/schema'

/** Longest error text kept with a message. */
export const MAX_FAILURE_TEXT = 2000
/** Longest error type kept: what `retryFailed({ errorType })` can select. */
export const MAX_ERROR_TYPE = 200
const MAX_STACK = 8000

/** jsonb refuses \u0000 and unpaired surrogates; error texts may hold either. */
function clean(text: string): string {
  return text.replaceAll('\u0000', '\ufffd').toWellFormed()
}

/**
 * @internal An error's type and text (at most 2,000 characters), safe for
 * jsonb: what the failure record stores and what `onFailure` callbacks
 * receive. A thrown non-Error is described by its `typeof` and its JSON.
 */
export function describeError(error: unknown): { type: string; message: string } {
  const isError = error instanceof Error
  // `class PaymentDeclined extends Error {}` keeps the name 'Error': prefer the class name then.
  const type = isError
    ? error.name && error.name !== 'Error'
      ? error.name
      : error.constructor?.name || 'Error'
    : typeof error
  let text: unknown
  try {
    text = isError
      ? error.message
      : typeof error === 'string'
        ? error
        : (JSON.stringify(error) ?? String(error))
  } catch {
    // JSON.stringify throws on a bigint, String() on an object without a prototype.
    text = error
  }
  return {
    type: clean(asText(type).slice(0, MAX_ERROR_TYPE)),
    message: clean(asText(text).slice(0, MAX_FAILURE_TEXT)),
  }
}

/** A string as is; anything else (a name or message that is not a string) described safely. */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : describeValue(value)
}

/**
 * @internal What a failed attempt leaves on its message: the error's type,
 * its text (at most 2,000 characters), the time, the attempt and the stack.
 */
export function failureRecord(error: unknown, attempt: number): FailureRecord {
  const stack =
    error instanceof Error && typeof error.stack === 'string'
      ? clean(error.stack.slice(0, MAX_STACK))
      : undefined
  return {
    ...describeError(error),
    at: new Date().toISOString(),
    attempt,
    ...(stack ? { stack } : {}),
  }
}
