import { assertName } from '../actor/names.js'
import {
  checkFunction,
  checkKnownKeys,
  checkObject,
  flagOption,
  integerOption,
} from '../options/check-option.js'

/**
 * What every bulk operation (`retryFailed({...})`, `cancelMany`,
 * `deleteMessages`) takes besides its filters.
 *
 * @example
 * const { retried } = await broker.retryFailed({
 *   queue: 'emails',
 *   batchSize: 500,
 *   onProgress: ({ retried }) => console.error(`${retried} retried so far`),
 * })
 */
export interface BulkOptions<Progress> {
  /** Only count what the call would change, and change nothing. Default false. */
  readonly dryRun?: boolean
  /** Messages per batch, each batch its own short transaction: 1 to 10,000. Default 1,000. */
  readonly batchSize?: number
  /** Called after each batch with the running totals. */
  readonly onProgress?: (progress: Progress) => void
}

/**
 * Messages per batch of a bulk operation unless `batchSize` says otherwise.
 *
 * @example
 * await broker.deleteMessages({ queue: 'emails', batchSize: DEFAULT_BULK_BATCH * 5 })
 */
export const DEFAULT_BULK_BATCH = 1000

/**
 * The largest `batchSize` of a bulk operation.
 *
 * @example
 * await broker.retryFailed({ queue: 'emails', batchSize: MAX_BULK_BATCH })
 */
export const MAX_BULK_BATCH = 10_000

/** @internal The checked batch size. */
export function bulkBatchSize(value: unknown): number {
  return integerOption('batchSize', value, DEFAULT_BULK_BATCH, { min: 1, max: MAX_BULK_BATCH })
}

/** @internal Refuses a filter that is not an object, or has keys the operation does not know. */
export function assertFilter(what: string, filter: unknown, known: readonly string[]): void {
  checkObject('filter', filter, `${what} filter`, false)
  checkKnownKeys(
    filter,
    known,
    (key) => `Unknown ${what} option ${JSON.stringify(key)}: expected one of ${known.join(', ')}`,
  )
  const { dryRun, onProgress } = filter as BulkOptions<unknown>
  flagOption('dryRun', dryRun)
  checkFunction('onProgress', onProgress)
}

/**
 * @internal Builds the `where` conditions of a bulk statement, numbering
 * parameters after those already in `params`. Values are always parameters.
 */
export class Conditions {
  readonly #parts: string[] = []
  constructor(readonly params: unknown[]) {}

  /** Adds `sql` with `?` replaced by the next parameter, holding `value`. */
  add(sql: string, value: unknown): this {
    this.params.push(value)
    this.#parts.push(sql.replace('?', `$${this.params.length}`))
    return this
  }

  /** Adds a condition without a parameter. */
  raw(sql: string): this {
    this.#parts.push(sql)
    return this
  }

  /** Adds `queue = ?` and `actor = ?` for the filters given, after checking the names. */
  names(filter: { readonly queue?: unknown; readonly actor?: unknown }): this {
    if (filter.queue !== undefined) {
      assertName('queue', filter.queue)
      this.add('queue = ?', filter.queue)
    }
    if (filter.actor !== undefined) {
      assertName('actor', filter.actor)
      this.add('actor = ?', filter.actor)
    }
    return this
  }

  toString(): string {
    return this.#parts.join(' and ')
  }
}
