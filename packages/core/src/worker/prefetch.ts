/**
 * Most messages `prefetch: 'auto'` buffers ahead of a worker's free slots.
 * A fixed `prefetch` number is used as given.
 *
 * @example
 * console.log(MAX_PREFETCH) // 1000
 */
export const MAX_PREFETCH = 1000
const WINDOW_MS = 250
const SAMPLE_MS = 50

/**
 * @internal How many messages to hold ahead of free slots. Fixed, or `auto`:
 * about 250 ms of work at the completion rate measured over the last 50 ms
 * or more, between 1 and 1,000. Until a rate is known it is the concurrency.
 */
export class Prefetch {
  #completed = 0
  #since = performance.now()
  #target: number

  constructor(
    private readonly fixed: number | 'auto',
    concurrency: number,
  ) {
    this.#target = fixed === 'auto' ? concurrency : fixed
  }

  completed(): void {
    this.#completed++
  }

  target(): number {
    if (this.fixed !== 'auto') return this.#target
    const now = performance.now()
    const elapsed = now - this.#since
    if (elapsed >= SAMPLE_MS && this.#completed > 0) {
      const rate = this.#completed / elapsed
      this.#target = Math.max(1, Math.min(MAX_PREFETCH, Math.ceil(rate * WINDOW_MS)))
      this.#completed = 0
      this.#since = now
    }
    return this.#target
  }
}
