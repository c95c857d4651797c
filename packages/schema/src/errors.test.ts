import { describe, expect, it } from 'vitest'
import { IddqueueError, InvalidIdentifierError, InvalidOptionError } from './errors.js'

class Outer extends InvalidOptionError {}

describe('IddqueueError.isInstance', () => {
  it('is true for the class, its parents and IddqueueError, and false for siblings', () => {
    const error = new Outer('x')
    expect(error.name).toBe('Outer')
    expect(Outer.isInstance(error)).toBe(true)
    expect(InvalidOptionError.isInstance(error)).toBe(true)
    expect(IddqueueError.isInstance(error)).toBe(true)
    expect(InvalidIdentifierError.isInstance(error)).toBe(false)
    expect(Outer.isInstance(new InvalidOptionError('y'))).toBe(false)
  })

  it('recognises an error from another copy of the package by its marks', () => {
    const foreign = Object.assign(new Error('z'), {
      [Symbol.for('iddqueue.error.InvalidOptionError')]: true,
    })
    expect(InvalidOptionError.isInstance(foreign)).toBe(true)
    expect(InvalidOptionError.isInstance(new Error('plain'))).toBe(false)
    expect(InvalidOptionError.isInstance(null)).toBe(false)
  })
})

describe('InvalidOptionError', () => {
  it('keeps the option, the value and what was expected as fields', () => {
    const error = new InvalidOptionError('Invalid concurrency 0: expected at least 1', {
      option: 'concurrency',
      value: 0,
      expected: 'at least 1',
    })
    expect(error).toMatchObject({ option: 'concurrency', value: 0, expected: 'at least 1' })
    expect(new InvalidOptionError('x').option).toBeUndefined()
  })
})
