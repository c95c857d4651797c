import type { DashboardData } from '../data/dashboard-data.js'
import { countFinished, THROUGHPUT_MINUTES, type Throughput } from '../data/throughput.js'

/**
 * @internal How long after a row's finish time its count is kept: a settle
 * stamps `updated_at` with its transaction's start and commits within
 * milliseconds, so after 10 s every row of that time is visible. A row that
 * commits later (a transactional actor's handler running longer) is picked
 * up by the next recount.
 */
export const SETTLE_MS = 10_000

/** @internal How often the kept minutes are counted again, in the background. */
export const RECOUNT_MS = 5 * 60_000

type Counts = { done: number; rejected: number }

/**
 * @internal The one-hour chart's counts, kept across reads so that a read
 * counts only what finished since the previous one (decision 0017).
 *
 * Rows that finished more than {@link SETTLE_MS} before a read are settled:
 * their counts, per minute, queue and state, are added to the kept minutes
 * and never counted again; the rest (the last 10 s, and whatever finished
 * since the previous read) is counted afresh by every read. The first read
 * counts the whole hour. Every {@link RECOUNT_MS} a read also starts a
 * recount of the whole hour in the background, and each kept minute becomes
 * the greater of its kept count and the recount: a row committed late is
 * added, and a row deleted since it was counted (purge, `deleteMessages`,
 * a retry of a rejected message) stays counted, since it did finish in that
 * minute. A count is never above the messages that finished in its minute.
 */
export class ThroughputCache {
  /** Kept counts: minute (since the epoch) → queue → counts. */
  readonly #minutes = new Map<number, Map<string, Counts>>()
  /** Rows that finished before this instant (ms) are in `#minutes`; null before the first read. */
  #settledBeforeMs: number | null = null
  #recountedAtMs = 0
  #recount: Promise<void> | undefined
  /** Reads run one at a time, so that each adds what it settled exactly once. */
  #reading: Promise<unknown> = Promise.resolve()
  /** @internal For tests: whole-hour counts run (the first read's and the recounts). */
  fullCounts = 0

  constructor(
    private readonly data: DashboardData,
    private readonly onError: (error: unknown) => void,
  ) {}

  /**
   * Finished messages per minute over the last hour, per queue ('' for all),
   * up to `at` (default the database's clock; tests pass their own).
   */
  read(at?: Date): Promise<Map<string, Throughput>> {
    const value = this.#reading.then(() => this.#read(at))
    this.#reading = value.catch(() => {})
    return value
  }

  /** Resolves once no read or recount is running (for `close()` and tests). */
  async settled(): Promise<void> {
    await this.#reading
    await this.#recount
  }

  async #read(at: Date | undefined): Promise<Map<string, Throughput>> {
    const sinceMs = this.#settledBeforeMs
    if (sinceMs === null) this.fullCounts++
    const result = await countFinished(this.data, {
      sinceMs,
      settleMs: SETTLE_MS,
      ...(at ? { at } : {}),
    })
    const live = new Map<number, Map<string, Counts>>()
    for (const count of result.counts) {
      add(count.settled ? this.#minutes : live, count.minute, count.queue, count.state, count.n)
    }
    if (sinceMs === null) this.#recountedAtMs = result.atMs
    if (sinceMs === null || result.settledBeforeMs > sinceMs)
      this.#settledBeforeMs = result.settledBeforeMs
    const first = result.minute - (THROUGHPUT_MINUTES - 1)
    for (const minute of this.#minutes.keys()) if (minute < first) this.#minutes.delete(minute)
    if (this.#recount === undefined && result.atMs - this.#recountedAtMs >= RECOUNT_MS) {
      this.#recountedAtMs = result.atMs
      this.#recount = this.#recountAll(at)
        .catch(this.onError)
        .finally(() => {
          this.#recount = undefined
        })
    }
    return series(first, [this.#minutes, live])
  }

  async #recountAll(at: Date | undefined): Promise<void> {
    this.fullCounts++
    const result = await countFinished(this.data, {
      sinceMs: null,
      settleMs: SETTLE_MS,
      ...(at ? { at } : {}),
    })
    // Only minutes both sides hold whole: a minute the reads are still
    // settling would otherwise get its remaining rows added on top.
    const whole = Math.floor(Math.min(result.settledBeforeMs, this.#settledBeforeMs ?? 0) / 60_000)
    const recounted = new Map<number, Map<string, Counts>>()
    for (const count of result.counts)
      if (count.minute < whole) add(recounted, count.minute, count.queue, count.state, count.n)
    for (const [minute, queues] of recounted) {
      let kept = this.#minutes.get(minute)
      if (!kept) {
        kept = new Map()
        this.#minutes.set(minute, kept)
      }
      for (const [queue, counts] of queues) {
        const mine = kept.get(queue)
        if (!mine) kept.set(queue, counts)
        else {
          mine.done = Math.max(mine.done, counts.done)
          mine.rejected = Math.max(mine.rejected, counts.rejected)
        }
      }
    }
  }
}

function add(
  minutes: Map<number, Map<string, Counts>>,
  minute: number,
  queue: string,
  state: 'done' | 'rejected',
  n: number,
): void {
  let queues = minutes.get(minute)
  if (!queues) {
    queues = new Map()
    minutes.set(minute, queues)
  }
  let counts = queues.get(queue)
  if (!counts) {
    counts = { done: 0, rejected: 0 }
    queues.set(queue, counts)
  }
  counts[state] += n
}

/** The chart's series from `first` on, per queue and for all ('') of them. */
function series(
  first: number,
  sources: readonly Map<number, Map<string, Counts>>[],
): Map<string, Throughput> {
  const byQueue = new Map<string, { done: number[]; rejected: number[] }>()
  const of = (queue: string) => {
    let found = byQueue.get(queue)
    if (!found) {
      found = {
        done: new Array<number>(THROUGHPUT_MINUTES).fill(0),
        rejected: new Array<number>(THROUGHPUT_MINUTES).fill(0),
      }
      byQueue.set(queue, found)
    }
    return found
  }
  for (const minutes of sources) {
    for (const [minute, queues] of minutes) {
      const index = minute - first
      if (index < 0 || index >= THROUGHPUT_MINUTES) continue
      for (const [queue, counts] of queues) {
        for (const target of [of(queue), of('')]) {
          target.done[index]! += counts.done
          target.rejected[index]! += counts.rejected
        }
      }
    }
  }
  return byQueue
}
