import { describeValue, InvalidOptionError } from '@iddqueue/schema'
import { isUuid } from '../message/uuid7.js'

/** The largest PostgreSQL `integer`: priorities are stored as one. */
export const INT4_MAX = 2_147_483_647

/**
 * @internal The longest delay a Node timer keeps (about 24.8 days): past it,
 * `setTimeout` fires after 1 ms. Every option that arms a timer stays under it.
 */
export const MAX_TIMER_MS = 2_147_483_647

/**
 * @internal The longest retention (100 years): `now() - retention` must stay a
 * timestamp PostgreSQL can store.
 */
export const MAX_RETENTION_MS = 3_155_760_000_000

/** @internal Where a checked option belongs, for the error text: `for actor add`, `batch entry 3`. */
export interface CheckOptions {
  readonly where?: string
}

/** @internal Bounds of an integer option; `max` defaults to `Number.MAX_SAFE_INTEGER`. */
export interface IntegerBounds extends CheckOptions {
  readonly min: number
  readonly max?: number
}

/**
 * The value as a refusal names it ({@link describeValue}). That throws on an
 * object that passes `instanceof Date` without being one (it reads the time
 * with `getTime`, which refuses it); the refusal must stay an
 * `InvalidOptionError` then too.
 */
function show(value: unknown): string {
  try {
    return describeValue(value)
  } catch {
    return 'an object'
  }
}

/** @internal What every refusal names: the option, the value given and what was expected. */
export interface OptionRefusal {
  readonly option: string
  readonly value: unknown
  readonly expected: string
}

/**
 * @internal An `InvalidOptionError` carrying the three fields, in a wording
 * of its own: for refusals whose text does not fit the one shape of
 * {@link invalidOption} and that callers already match on (`Unknown option
 * "retries" for actor send: ...`, `Invalid batch of 1001 messages: ...`).
 */
export function refuseOption(message: string, refusal: OptionRefusal): InvalidOptionError {
  return new InvalidOptionError(message, {
    option: refusal.option,
    value: refusal.value,
    expected: refusal.expected,
  })
}

/**
 * @internal The one shape of a refused option: `Invalid <option> <value>
 * (<where>): expected <expected>`, with the three as fields of the error.
 */
export function invalidOption(
  option: string,
  value: unknown,
  expected: string,
  where?: string,
): InvalidOptionError {
  const place = where ? ` (${where})` : ''
  return refuseOption(`Invalid ${option} ${show(value)}${place}: expected ${expected}`, {
    option,
    value,
    expected,
  })
}

/**
 * @internal A refusal that names the option without showing its value
 * (`Invalid onProgress: expected a function`), for values whose text says
 * nothing (a function, an object) or that may hold a secret. `label` is the
 * option as the text names it: `handler for actor send`.
 */
export function labelledRefusal(
  option: string,
  value: unknown,
  expected: string,
  label: string = option,
): InvalidOptionError {
  return refuseOption(`Invalid ${label}: expected ${expected}`, { option, value, expected })
}

function integerExpected(min: number, max: number): string {
  return max === Number.MAX_SAFE_INTEGER
    ? `an integer of at least ${min}`
    : `an integer from ${min} to ${max}`
}

/** @internal Refuses a value that is neither undefined nor an integer within bounds. */
export function checkInteger(option: string, value: unknown, bounds: IntegerBounds): void {
  if (value === undefined) return
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER
  if (typeof value !== 'number' || !Number.isInteger(value) || value < bounds.min || value > max) {
    throw invalidOption(option, value, integerExpected(bounds.min, max), bounds.where)
  }
}

/** @internal An integer option within bounds, or `fallback` when undefined. */
export function integerOption(
  option: string,
  value: unknown,
  fallback: number,
  bounds: IntegerBounds,
): number {
  checkInteger(option, value, bounds)
  return value === undefined ? fallback : (value as number)
}

/** @internal A boolean option: `fallback` when undefined, refused when not a boolean. */
export function flagOption(
  option: string,
  value: unknown,
  fallback = false,
  check: CheckOptions = {},
): boolean {
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') throw invalidOption(option, value, 'true or false', check.where)
  return value
}

/** @internal Refuses anything but a UUID (a message id, an attempt id, a cursor). */
export function checkUuid(
  option: string,
  value: unknown,
  check: CheckOptions = {},
): asserts value is string {
  if (!isUuid(value)) throw invalidOption(option, value, 'a UUID', check.where)
}

/**
 * @internal Refuses a value that is neither undefined nor a non-empty string
 * of at most `maxLength` that PostgreSQL stores as given: `\u0000` fails the
 * statement (aborting a caller's transaction), and an unpaired surrogate is
 * sent as U+FFFD, which matches other text.
 */
export function checkText(option: string, value: unknown, maxLength: number): void {
  if (value === undefined) return
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > maxLength ||
    value.includes('\u0000') ||
    !value.isWellFormed()
  ) {
    throw invalidOption(
      option,
      value,
      `a non-empty string of at most ${maxLength} characters, without \\u0000 or unpaired surrogates`,
    )
  }
}

/** The earliest time option: 0001-01-01T00:00:00.000Z. */
const MIN_TIME_MS = -62_135_596_800_000

/** The latest time option: 9999-12-31T23:59:59.999Z. */
const MAX_TIME_MS = 253_402_300_799_999

/**
 * @internal A time option (a Date or epoch ms) as ISO text for a timestamptz
 * parameter; undefined when absent. Years 1 to 9999 only: outside them
 * `toISOString()` writes `+010000-…`, `-000001-…` or year `0000`, which
 * PostgreSQL refuses in the statement, aborting a caller's transaction.
 */
export function timeOption(option: string, value: unknown): string | undefined {
  if (value === undefined) return undefined
  const ms = value instanceof Date ? dateTime(value) : value
  if (typeof ms !== 'number' || !(ms >= MIN_TIME_MS && ms <= MAX_TIME_MS)) {
    const expected = `a valid Date or epoch milliseconds from ${new Date(MIN_TIME_MS).toISOString()} to ${new Date(MAX_TIME_MS).toISOString()}`
    // A valid Date is shown as its time, which says more than "a Date".
    const shown =
      value instanceof Date && typeof ms === 'number' && Number.isFinite(ms)
        ? new Date(ms).toISOString()
        : show(value)
    throw refuseOption(`Invalid ${option} ${shown}: expected ${expected}`, {
      option,
      value,
      expected,
    })
  }
  return new Date(ms).toISOString()
}

/**
 * @internal A Date's time, read with Date's own method: a subclass may override
 * `getTime`, and an object that only inherits from Date.prototype makes it
 * throw (NaN here).
 */
export function dateTime(value: Date): number {
  try {
    return Date.prototype.getTime.call(value)
  } catch {
    return Number.NaN
  }
}

/**
 * @internal Refuses anything but a non-null object (an options bag, a
 * filter): `Invalid <label>: expected an object`. Arrays pass unless
 * `arrays` is false.
 */
export function checkObject(
  option: string,
  value: unknown,
  label: string = option,
  arrays = true,
): asserts value is object {
  if (typeof value !== 'object' || value === null || (!arrays && Array.isArray(value))) {
    throw labelledRefusal(option, value, 'an object', label)
  }
}

/**
 * @internal Refuses a value that is neither undefined nor a function:
 * `Invalid <label>: expected <expected>`.
 */
export function checkFunction(
  option: string,
  value: unknown,
  label: string = option,
  expected = 'a function',
): void {
  if (value !== undefined && typeof value !== 'function') {
    throw labelledRefusal(option, value, expected, label)
  }
}

/**
 * @internal Refuses the first key of `options` not in `known`. The error's
 * `option` is the unknown key, its `value` the value under it, `expected`
 * the known keys; `message` words the text for the caller.
 */
export function checkKnownKeys(
  options: object,
  known: readonly string[],
  message: (key: string) => string,
): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw refuseOption(message(key), {
        option: key,
        value: (options as Record<string, unknown>)[key],
        expected: `one of ${known.join(', ')}`,
      })
    }
  }
}

/**
 * @internal Refuses a priority PostgreSQL's `integer` column cannot hold,
 * before any SQL: a fraction, NaN or a number past ±2^31-1 would otherwise
 * fail in the INSERT and abort a caller's transaction.
 */
export function checkPriority(value: unknown, check: CheckOptions = {}): void {
  checkInteger('priority', value, { min: -INT4_MAX, max: INT4_MAX, where: check.where })
}
