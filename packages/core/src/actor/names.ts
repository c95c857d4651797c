import { describeValue } from '@iddqueue/schema'
import { InvalidIdentifierError } from '../errors.js'

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$/

/**
 * @internal Checks a queue or actor name: 1 to 128 ASCII letters, digits,
 * `_`, `.`, `:` or `-`, not starting with a punctuation mark.
 */
export function assertName(kind: 'queue' | 'actor', value: unknown): asserts value is string {
  if (typeof value !== 'string' || !NAME.test(value)) {
    throw new InvalidIdentifierError(
      `Invalid ${kind} name ${describeValue(value)}: expected 1 to 128 ASCII letters, digits, '_', '.', ':' or '-', starting with a letter, digit or '_'`,
    )
  }
}

/**
 * Checks a queue name as iddqueue does wherever it takes one: 1 to 128 ASCII
 * letters, digits, `_`, `.`, `:` or `-`, not starting with a punctuation
 * mark. Throws `InvalidIdentifierError` naming the value otherwise. For
 * checking configuration before it reaches a broker.
 *
 * @example
 * assertQueueName('emails')   // ok
 * assertQueueName('bad name') // throws InvalidIdentifierError: Invalid queue name "bad name": ...
 */
export function assertQueueName(value: unknown): asserts value is string {
  assertName('queue', value)
}
