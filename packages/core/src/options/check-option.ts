import { InvalidOptionError } from '@iddqueue/schema'
import { isUuid } from '../message/uuid7.js'

/** The largest PostgreSQL `integer`: priorities are stored as one. */
export const INT4_MAX = 2_147_483_647

/** @internal Where a checked option belongs, for the error text: `for actor add`, `batch entry 3`. */
export interface CheckOptions {
  readonly where?: string
}

/** @internal Bounds of an integer option; `max` defaults to `Number.MAX_SAFE_INTEGER`. */
export interface IntegerBounds extends CheckOptions {
  readonly min: number
  readonly max?: number
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'bigint') return `${value}n`
  try {
    return String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
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
  return new InvalidOptionError(`Invalid ${option} ${show(value)}${place}: expected ${expected}`, {
    option,
    value,
    expected,
  })
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

/** @internal Refuses anything but a UUID (a message id, an attempt id). */
export function checkUuid(option: string, value: unknown): asserts value is string {
  if (!isUuid(value)) throw invalidOption(option, value, 'a UUID')
}

/**
 * @internal Refuses a priority PostgreSQL's `integer` column cannot hold,
 * before any SQL: a fraction, NaN or a number past ±2^31-1 would otherwise
 * fail in the INSERT and abort a caller's transaction.
 */
export function checkPriority(value: unknown, check: CheckOptions = {}): void {
  checkInteger('priority', value, { min: -INT4_MAX, max: INT4_MAX, where: check.where })
}
