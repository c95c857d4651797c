import type { PreparedEntry } from './prepared-entry.js'

/**
 * Inserts of the broker's own sends in flight at once before a send waits
 * to share the next insert (see {@link SendCoalescer}).
 */
const DIRECT_INSERTS = 4

/** Most rows one shared insert takes (the insert statements' batch size). */
const MAX_ROWS = 1_000

interface Waiting {
  readonly entries: readonly PreparedEntry[]
  resolve(inserted: number): void
  reject(error: unknown): void
}

/**
 * @internal Sends that arrive while {@link DIRECT_INSERTS} inserts of the
 * broker's own sends are in flight (a web server's many concurrent
 * requests, each awaiting one send) wait for one of them to end and then
 * share one insert statement: one round trip, one plan and one commit for
 * all of them, instead of one each (decision 0010's update). A lone send,
 * or a few at once, is inserted at once as before.
 *
 * A shared insert commits its rows together; when it fails, each send's
 * rows are inserted again on their own, so one send's failure (a value
 * PostgreSQL refuses, an id already stored) is reported to that send only.
 * Each resolves with the number of rows the statement that stored them
 * inserted (its callers only ask whether it was any).
 */
export class SendCoalescer {
  #inFlight = 0
  /** Waiting sends, by `skipExisting` (index 1 when set): one statement takes one kind. */
  readonly #waiting: [Waiting[], Waiting[]] = [[], []]

  constructor(
    private readonly insert: (
      entries: readonly PreparedEntry[],
      skipExisting: boolean,
    ) => Promise<number>,
  ) {}

  /** Inserts `entries` now, or with other sends once an insert in flight ends. */
  run(entries: readonly PreparedEntry[], skipExisting: boolean): Promise<number> {
    if (this.#inFlight < DIRECT_INSERTS) return this.#insertNow([], entries, skipExisting)
    return new Promise((resolve, reject) => {
      this.#waiting[skipExisting ? 1 : 0].push({ entries, resolve, reject })
    })
  }

  async #insertNow(
    group: readonly Waiting[],
    entries: readonly PreparedEntry[],
    skipExisting: boolean,
  ): Promise<number> {
    this.#inFlight++
    try {
      const inserted = await this.insert(entries, skipExisting)
      for (const waiting of group) waiting.resolve(inserted)
      return inserted
    } catch (error) {
      if (group.length <= 1) {
        for (const waiting of group) waiting.reject(error)
        throw error
      }
      // One send's rows may have failed the statement: each on its own.
      await Promise.all(
        group.map((waiting) =>
          this.insert(waiting.entries, skipExisting).then(waiting.resolve, waiting.reject),
        ),
      )
      return 0
    } finally {
      this.#inFlight--
      this.#next()
    }
  }

  /** Starts one shared insert per kind of waiting sends, while there is room. */
  #next(): void {
    for (const skipExisting of [false, true]) {
      const queue = this.#waiting[skipExisting ? 1 : 0]
      while (queue.length > 0 && this.#inFlight < DIRECT_INSERTS) {
        const group: Waiting[] = []
        let rows = 0
        while (
          queue.length > 0 &&
          (group.length === 0 || rows + queue[0]!.entries.length <= MAX_ROWS)
        ) {
          const waiting = queue.shift()!
          group.push(waiting)
          rows += waiting.entries.length
        }
        const entries = group.length === 1 ? group[0]!.entries : group.flatMap((w) => w.entries)
        // Settles the group; its own promise is nobody's (a failure was handed to them).
        this.#insertNow(group, entries, skipExisting).catch(() => {})
      }
    }
  }
}
