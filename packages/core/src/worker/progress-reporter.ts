import { PayloadTooLargeError } from '../errors.js'
import { encodeJson } from '../message/message-codec.js'
import type { BrokerContext } from '../runtime/broker-context.js'

/**
 * The largest progress value `ctx.progress()` stores, in bytes of JSON.
 *
 * @example
 * await ctx.progress({ done: 10, total: 200 }) // a few bytes; 4,096 at most
 */
export const MAX_PROGRESS_BYTES = 4096

/**
 * How often a running handler's progress is written at most, in ms. Calls in
 * between replace the value waiting to be written.
 *
 * @example
 * for (const [i, row] of rows.entries()) {
 *   await importRow(row)
 *   await ctx.progress({ done: i + 1 }) // written at most every PROGRESS_INTERVAL_MS
 * }
 */
export const PROGRESS_INTERVAL_MS = 1000

/**
 * @internal The progress of one running attempt, throttled: the first value
 * is written at once, later ones at most once per interval (the last value
 * of an interval wins), each a one-row update guarded by "still consumed by
 * this worker". The settle statement writes the last value too, so the final
 * progress is never lost to a write still waiting for its turn.
 */
export class ProgressReporter {
  /** The last value reported, as JSON; the settle writes it. */
  latest: string | undefined = undefined
  #pending: string | undefined = undefined
  #lastWriteAt = Number.NEGATIVE_INFINITY
  #timer: NodeJS.Timeout | undefined = undefined
  #writing: Promise<void> | undefined = undefined
  #done = false

  constructor(
    private readonly core: BrokerContext,
    private readonly messageId: string,
    private readonly workerId: string,
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
  ) {}

  /** Checks and records a value; resolves once it is written or scheduled. */
  report(value: unknown): Promise<void> {
    let json: string
    try {
      json = encodeJson(value === undefined ? null : value, 'progress')
      const bytes = json.length * 3 > MAX_PROGRESS_BYTES ? Buffer.byteLength(json) : json.length
      if (bytes > MAX_PROGRESS_BYTES) {
        throw new PayloadTooLargeError(
          `Progress of message ${this.messageId} is ${bytes} bytes of JSON, over the limit of ${MAX_PROGRESS_BYTES} bytes`,
        )
      }
    } catch (error) {
      return Promise.reject(error)
    }
    this.latest = json
    if (this.#done) return Promise.resolve()
    const wait = this.#lastWriteAt + this.intervalMs - performance.now()
    if (wait <= 0 && !this.#writing) return this.#write(json)
    this.#pending = json
    this.#timer ??= setTimeout(() => this.#flushPending(), Math.max(wait, 0))
    this.#timer.unref?.()
    return Promise.resolve()
  }

  /** The attempt ended: no more writes (the settle carries {@link latest}). */
  stop(): void {
    this.#done = true
    this.#pending = undefined
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #flushPending(): void {
    this.#timer = undefined
    const json = this.#pending
    this.#pending = undefined
    if (json === undefined || this.#done) return
    if (this.#writing) {
      // The previous write is slow: try again once it ends.
      this.#pending = json
      void this.#writing.then(() => {
        this.#timer ??= setTimeout(() => this.#flushPending(), 0)
      })
      return
    }
    void this.#write(json)
  }

  #write(json: string): Promise<void> {
    this.#lastWriteAt = performance.now()
    const writing = this.core.executor
      .query(this.core.statements.reportProgress, [this.messageId, json, this.workerId])
      .then(
        () => {},
        (error: unknown) => {
          // Progress is for people watching: a lost write never fails the handler.
          this.core.logger.warn('could not store progress', { message: this.messageId, error })
        },
      )
      .finally(() => {
        if (this.#writing === writing) this.#writing = undefined
      })
    this.#writing = writing
    return writing
  }
}
