/**
 * Options accepted by every {@link TestDatabaseError}.
 *
 * @example
 * throw new TestDatabaseError('could not reach the server', { cause: error })
 */
export interface TestDatabaseErrorOptions {
  /** The error that caused this one, kept for logs and debuggers. */
  readonly cause?: unknown
}

// The same global marker as `IddqueueError` in @iddqueue/schema, so
// `IddqueueError.isInstance(error)` also recognises errors thrown here without
// this package depending on any @iddqueue package (they devDepend on it).
const marker = Symbol.for('iddqueue.error')

/**
 * The base class of every error `@iddqueue/testing` throws.
 *
 * It follows the iddqueue error pattern: a stable `name` and a
 * `Symbol.for('iddqueue.error.<Name>')` marker, so `XxxError.isInstance(e)`
 * works even when two copies of the package are installed and `instanceof`
 * would fail. The message names the value that was wrong and what was expected.
 *
 * @example
 * try {
 *   await startTestDatabase({ mode: 'env', url: '' })
 * } catch (error) {
 *   if (TestDatabaseError.isInstance(error)) console.error(error.message)
 *   throw error
 * }
 */
export class TestDatabaseError extends Error {
  readonly [marker] = true

  constructor(message: string, options: TestDatabaseErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    // One marker per class up the chain, so `TestDatabaseError.isInstance` also
    // accepts a `WaitTimeoutError`.
    for (let type: Function = new.target; type !== Error; type = Object.getPrototypeOf(type)) {
      Object.defineProperty(this, Symbol.for(`iddqueue.error.${type.name}`), { value: true })
    }
  }

  /** True when `error` is an error of this class (or a subclass), across package copies. */
  static isInstance(error: unknown): boolean {
    if (typeof error !== 'object' || error === null) return false
    return Symbol.for(`iddqueue.error.${this.name}`) in error
  }
}
