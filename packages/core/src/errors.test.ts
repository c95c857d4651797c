import { InvalidOptionError } from '@iddqueue/schema'
import { describe, expect, it } from 'vitest'
import { IddqueueError, Retry, withContext } from './errors.js'

/** A plugin error whose constructor takes something other than a message. */
class ResultFailureLike extends IddqueueError {
  constructor(
    readonly messageId: string,
    options: { cause?: unknown } = {},
  ) {
    super(`Message ${messageId} failed`, options)
  }
}

describe('withContext', () => {
  it('keeps a Retry a Retry with its delay', () => {
    const original = new Retry({ delayMs: 5_000 })
    const error = withContext(original, 'send to add') as Retry
    expect(Retry.isInstance(error)).toBe(true)
    expect(error).toBeInstanceOf(Retry)
    expect(error.delayMs).toBe(5_000)
    expect(error.message).toBe('send to add: Retry requested in 5000 ms')
    expect(error.cause).toBe(original)
  })

  it('keeps the fields of errors whose constructor takes no message', () => {
    const original = new ResultFailureLike('0193-id')
    const error = withContext(original, 'result') as ResultFailureLike
    expect(error).toBeInstanceOf(ResultFailureLike)
    expect(error.messageId).toBe('0193-id')
    expect(error.message).toBe('result: Message 0193-id failed')
    expect(error.stack?.split('\n')[0]).toBe('ResultFailureLike: result: Message 0193-id failed')
  })

  it('keeps the structured fields of InvalidOptionError', () => {
    const original = new InvalidOptionError('Invalid priority 1.5: expected an integer', {
      option: 'priority',
      value: 1.5,
      expected: 'an integer',
    })
    const error = withContext(original, 'batch entry 2') as InvalidOptionError
    expect(InvalidOptionError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({ option: 'priority', value: 1.5, expected: 'an integer' })
  })

  it('passes other errors through', () => {
    const plain = new TypeError('x')
    expect(withContext(plain, 'p')).toBe(plain)
  })
})
