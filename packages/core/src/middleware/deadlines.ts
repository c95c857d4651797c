import type { ProcessEvent } from '../plugin/middleware-interface.js'

/** setTimeout's longest delay; a later deadline is looked at again then. */
const MAX_DELAY_MS = 2_147_483_647

/**
 * @internal The time limits of the attempts in progress, watched by one timer
 * armed for the earliest deadline rather than one timer per attempt.
 *
 * A timer per attempt, cleared in a `finally`, allocated ~600 bytes per
 * message (the Timeout, its closure, and `finally`'s promises and closures):
 * at tens of thousands of messages a second, a sixth of what a worker
 * allocates. Here an attempt takes a slot (reused, never a Map entry: see
 * `RunSlots`) and one reaction on its outcome frees it.
 */
export class Deadlines {
  readonly #events: (ProcessEvent | undefined)[] = []
  /** Deadline per slot, in `performance.now()` ms; Infinity once expired. */
  readonly #at: number[] = []
  /** One release function per slot, made once and reused with the slot. */
  readonly #releases: (() => void)[] = []
  readonly #free: number[] = []
  #active = 0
  #timer: NodeJS.Timeout | undefined
  #armedAt = Number.POSITIVE_INFINITY

  constructor(private readonly onExpired: (event: ProcessEvent) => void) {}

  /**
   * Runs `next` for `event`; when `limitMs` passes before the promise it
   * returns settles, calls `onExpired` once.
   */
  watch<T>(event: ProcessEvent, limitMs: number, next: () => Promise<T>): Promise<T> {
    const slot = this.#free.pop() ?? this.#grow()
    const at = performance.now() + limitMs
    this.#events[slot] = event
    this.#at[slot] = at
    this.#active++
    if (at < this.#armedAt) this.#arm(at)
    let outcome: Promise<T>
    try {
      outcome = next()
    } catch (error) {
      this.#release(slot)
      throw error
    }
    const release = this.#releases[slot]!
    outcome.then(release, release)
    return outcome
  }

  #grow(): number {
    const slot = this.#events.length
    this.#events.push(undefined)
    this.#at.push(Number.POSITIVE_INFINITY)
    this.#releases.push(() => this.#release(slot))
    return slot
  }

  #release(slot: number): void {
    this.#events[slot] = undefined
    this.#at[slot] = Number.POSITIVE_INFINITY
    this.#free.push(slot)
    // Nothing left to watch: do not keep the process alive for a deadline
    // that no longer matters.
    if (--this.#active === 0) this.#disarm()
  }

  #arm(at: number): void {
    clearTimeout(this.#timer)
    this.#armedAt = at
    const delay = Math.min(MAX_DELAY_MS, Math.max(0, at - performance.now()))
    this.#timer = setTimeout(() => this.#sweep(), delay)
  }

  #disarm(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#armedAt = Number.POSITIVE_INFINITY
  }

  #sweep(): void {
    this.#timer = undefined
    this.#armedAt = Number.POSITIVE_INFINITY
    const now = performance.now()
    let next = Number.POSITIVE_INFINITY
    for (let slot = 0; slot < this.#events.length; slot++) {
      const event = this.#events[slot]
      if (event === undefined) continue
      const at = this.#at[slot]!
      if (at <= now) {
        // The slot stays taken until the attempt's outcome settles, so a
        // late release cannot free a slot reused by another attempt.
        this.#at[slot] = Number.POSITIVE_INFINITY
        this.onExpired(event)
      } else if (at < next) {
        next = at
      }
    }
    if (next < Number.POSITIVE_INFINITY && next < this.#armedAt) this.#arm(next)
  }
}
