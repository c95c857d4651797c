import { describe, expect, it } from 'vitest'
import { TestDatabaseError } from './test-database-error.js'
import { waitFor } from './wait-for.js'
import { WaitTimeoutError } from './wait-timeout-error.js'

describe('waitFor', () => {
  it('resolves once the condition holds, polling async conditions', async () => {
    let polls = 0
    await waitFor(async () => ++polls === 3, { intervalMs: 1 })
    expect(polls).toBe(3)
  })

  it('throws WaitTimeoutError naming the message and the timeout', async () => {
    const started = Date.now()
    const error = await waitFor(() => false, { timeoutMs: 50, message: 'the receipt' }).catch(
      (e) => e,
    )
    expect(Date.now() - started).toBeGreaterThanOrEqual(45)
    expect(error).toBeInstanceOf(WaitTimeoutError)
    expect(error.message).toBe('waitFor timed out after 50 ms waiting for the receipt')
    expect(WaitTimeoutError.isInstance(error)).toBe(true)
    expect(TestDatabaseError.isInstance(error)).toBe(true)
    expect(Symbol.for('iddqueue.error') in error).toBe(true)
  })

  it('rethrows what the condition throws', async () => {
    const boom = new Error('boom')
    await expect(
      waitFor(() => {
        throw boom
      }),
    ).rejects.toBe(boom)
  })

  it('rejects a negative timeout, naming it', async () => {
    await expect(waitFor(() => true, { timeoutMs: -1 })).rejects.toThrow(
      'waitFor option `timeoutMs` must be a finite number >= 0, got -1',
    )
  })
})
