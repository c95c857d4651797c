import { assertQueueName, isUuid } from '@iddqueue/core'
import type { CommandInput } from './command.js'
import { UsageError } from './usage-error.js'

/** @internal A positional argument that must be a UUID, such as a message id. */
export function uuidOperand(value: string | undefined, what: string): string {
  if (!isUuid(value)) {
    throw new UsageError(`invalid ${what} ${JSON.stringify(value ?? '')}: expected a UUID`)
  }
  return value
}

/** @internal A string option, or undefined when absent. */
export function stringOption(input: CommandInput, name: string): string | undefined {
  const value = input.values[name]
  return typeof value === 'string' ? value : undefined
}

/** @internal An option that must be a UUID (a cursor), or undefined when absent. */
export function uuidOption(input: CommandInput, name: string): string | undefined {
  const value = stringOption(input, name)
  if (value !== undefined && !isUuid(value)) {
    throw new UsageError(`invalid --${name} ${JSON.stringify(value)}: expected a UUID`)
  }
  return value
}

/**
 * @internal A whole-number option (`--limit 50`), or undefined when absent.
 * Ranges are left to the operation, whose error names the allowed range.
 */
export function integerOption(input: CommandInput, name: string): number | undefined {
  const value = stringOption(input, name)
  if (value === undefined) return undefined
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN
  if (!Number.isSafeInteger(number)) {
    throw new UsageError(`invalid --${name} ${JSON.stringify(value)}: expected a whole number`)
  }
  return number
}

/** @internal A queue name, checked by core's rule (a bad one is a usage error). */
export function queueName(value: string | undefined): string | undefined {
  if (value !== undefined) assertQueueName(value)
  return value
}
