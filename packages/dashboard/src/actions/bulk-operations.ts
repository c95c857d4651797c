import { InvalidOptionError } from '@iddqueue/core'
import type { DashboardAction } from '../dashboard-options.js'
import { describeError } from '../describe-error.js'

/** @internal A bulk action over everything matching a filter. */
export type MatchingAction = Extract<
  DashboardAction,
  { kind: 'retry-matching' | 'cancel-matching' }
>

/** @internal Running totals of a bulk operation, as core's `onProgress` reports them after each batch. */
export type BulkProgress =
  | { readonly retried: number }
  | { readonly cancelled: number; readonly requested: number }

/**
 * @internal One bulk operation the dashboard runs in the background: what it
 * does, how many messages matched when it started (core's `dryRun` count),
 * the running totals after each batch, and how it ended.
 */
export interface BulkOperation {
  readonly id: string
  readonly action: MatchingAction
  /** Where the user came from: the operation page links back there. */
  readonly back: string
  readonly startedAt: Date
  state: 'running' | 'done' | 'failed'
  /** Matching messages when it started; undefined until counted. */
  total: number | undefined
  progress: BulkProgress
  /** Batches finished so far. */
  batches: number
  finishedAt: Date | undefined
  error: string | undefined
}

/** @internal How many bulk operations may run at once per dashboard. */
export const MAX_RUNNING = 4
/** @internal Finished operations kept for their pages. */
const KEEP_FINISHED = 50

/**
 * @internal The bulk operations of one dashboard, in memory: `start()` runs
 * one in the background and returns at once, so the request that asked for
 * it answers with a redirect to its progress page instead of holding the
 * connection for the whole run; `get()` reads its running totals. At most
 * {@link MAX_RUNNING} run at once; `close()` waits for the running ones
 * (each batch is a short transaction, so they end).
 */
export class BulkOperations {
  readonly #operations = new Map<string, BulkOperation>()
  readonly #running = new Set<Promise<void>>()

  get(id: string): BulkOperation | undefined {
    return this.#operations.get(id)
  }

  /**
   * Starts `run` with a progress callback. `count` answers how many messages
   * match (for a progress bar); `onEnd` is told how it ended (the audit).
   */
  start(
    action: MatchingAction,
    back: string,
    work: {
      count(): Promise<number>
      run(onProgress: (progress: BulkProgress) => void): Promise<BulkProgress>
      onEnd(operation: BulkOperation): Promise<void>
    },
  ): BulkOperation {
    if (this.#running.size >= MAX_RUNNING)
      throw new InvalidOptionError(
        `Too many bulk operations running: ${MAX_RUNNING} already; wait for one to finish`,
      )
    const operation: BulkOperation = {
      id: crypto.randomUUID(),
      action,
      back,
      startedAt: new Date(),
      state: 'running',
      total: undefined,
      progress: action.kind === 'retry-matching' ? { retried: 0 } : { cancelled: 0, requested: 0 },
      batches: 0,
      finishedAt: undefined,
      error: undefined,
    }
    this.#operations.set(operation.id, operation)
    this.#prune()
    const done = (async () => {
      try {
        operation.total = await work.count()
        operation.progress = await work.run((progress) => {
          operation.progress = progress
          operation.batches++
        })
        operation.state = 'done'
      } catch (error) {
        operation.state = 'failed'
        operation.error = describeError(error)
      }
      operation.finishedAt = new Date()
      try {
        await work.onEnd(operation)
      } catch {
        // The audit hook's failure must not turn a finished operation into an unhandled rejection.
      }
    })()
    this.#running.add(done)
    void done.finally(() => this.#running.delete(done))
    return operation
  }

  /** Waits for the running operations to end. */
  async close(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running)
  }

  /** Forgets the oldest finished operations beyond {@link KEEP_FINISHED}. */
  #prune(): void {
    const finished = [...this.#operations.values()].filter((op) => op.state !== 'running')
    for (const op of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED)))
      this.#operations.delete(op.id)
  }
}
