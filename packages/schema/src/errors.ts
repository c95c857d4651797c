/**
 * Options accepted by every {@link IddqueueError}.
 *
 * @example
 * try {
 *   JSON.parse(text)
 * } catch (error) {
 *   throw new InvalidOptionError('Invalid options file: expected JSON', { cause: error })
 * }
 */
export interface IddqueueErrorOptions {
  /** The error that caused this one, kept for logs and debuggers. */
  readonly cause?: unknown | undefined
}

const marker = Symbol.for('iddqueue.error')

/**
 * The base class of every error iddqueue throws.
 *
 * Each subclass has a stable `name` and a `Symbol.for('iddqueue.error.<Name>')`
 * marker, so `XxxError.isInstance(e)` works even when two copies of a package
 * are installed and `instanceof` would fail.
 *
 * @example
 * try {
 *   await broker.migrate()
 * } catch (error) {
 *   if (IddqueueError.isInstance(error)) console.error(error.name, error.message)
 *   throw error
 * }
 */
export class IddqueueError extends Error {
  readonly [marker] = true

  constructor(message: string, options: IddqueueErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    // Mark every class from this one up to IddqueueError, so that a parent's
    // isInstance() is true for a subclass, as instanceof would be.
    for (
      let type: unknown = new.target;
      typeof type === 'function' && type !== IddqueueError;
      type = Object.getPrototypeOf(type)
    )
      Object.defineProperty(this, Symbol.for(`iddqueue.error.${type.name}`), { value: true })
  }

  /** True when `error` is an iddqueue error of this class (or a subclass), across package copies. */
  static isInstance<T extends abstract new (...args: never[]) => IddqueueError>(
    this: T,
    error: unknown,
  ): error is InstanceType<T> {
    if (typeof error !== 'object' || error === null) return false
    if ((this as unknown) === IddqueueError) return marker in error
    return Symbol.for(`iddqueue.error.${this.name}`) in error
  }
}

/**
 * An identifier (schema, prefix, queue or actor name) that iddqueue refuses.
 *
 * @example
 * namespace({ schema: 'app"; drop table users; --' }) // throws InvalidIdentifierError
 */
export class InvalidIdentifierError extends IddqueueError {}

/**
 * Options of {@link InvalidOptionError}: the refused option, its value and
 * what was expected, kept as fields for programs that report them.
 *
 * @example
 * throw new InvalidOptionError('Invalid concurrency 0: expected an integer of at least 1', {
 *   option: 'concurrency',
 *   value: 0,
 *   expected: 'an integer of at least 1',
 * })
 */
export interface InvalidOptionErrorOptions extends IddqueueErrorOptions {
  /** The option or argument refused, e.g. `concurrency` or `priority`. */
  readonly option?: string
  /** The value refused. */
  readonly value?: unknown
  /** What would have been accepted, in words. */
  readonly expected?: string
}

/**
 * An option or argument with a value iddqueue cannot accept. The message names
 * the option and what was expected; `option`, `value` and `expected` hold the
 * same as fields (undefined where the check does not concern one option).
 *
 * @example
 * try {
 *   createBroker({ url, maxPayloadBytes: -1 })
 * } catch (error) {
 *   if (InvalidOptionError.isInstance(error)) console.error(error.option, error.expected) // 'maxPayloadBytes', 'an integer ...'
 * }
 */
export class InvalidOptionError extends IddqueueError {
  readonly option: string | undefined
  readonly value: unknown
  readonly expected: string | undefined

  constructor(message: string, options: InvalidOptionErrorOptions = {}) {
    super(message, options)
    this.option = options.option
    this.value = options.value
    this.expected = options.expected
  }
}

/**
 * PostgreSQL is older than iddqueue supports (14).
 *
 * @example
 * await migrate(db, { namespace: namespace() }) // on PostgreSQL 13: throws UnsupportedPostgresError
 */
export class UnsupportedPostgresError extends IddqueueError {}

/**
 * The migration ledger disagrees with the migrations in code: an applied
 * migration was edited, which the append-only rule forbids.
 *
 * @example
 * await migrate(db, { namespace: ns, owners: [edited] }) // throws MigrationError
 */
export class MigrationError extends IddqueueError {}
