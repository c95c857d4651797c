/**
 * Most messages `prefetch: 'auto'` buffers ahead of a worker's free slots,
 * for a worker of up to 100 queues; a worker of more queues may buffer
 * {@link PREFETCH_PER_QUEUE} per queue. A fixed `prefetch` number is used
 * as given.
 *
 * @example
 * console.log(MAX_PREFETCH) // 1000
 */
export const MAX_PREFETCH = 1000

/**
 * Messages per queue `prefetch: 'auto'` may buffer when that is more than
 * {@link MAX_PREFETCH}: a claim over several queues reads a few index
 * entries per queue whatever its size, so a worker of 200 queues claims in
 * batches large enough to give each queue a few rows (decision 0009).
 *
 * @example
 * console.log(Math.max(MAX_PREFETCH, PREFETCH_PER_QUEUE * 200)) // 2000
 */
export const PREFETCH_PER_QUEUE = 10
const WINDOW_MS = 250
const SAMPLE_MS = 50

/**
 * @internal How many messages to hold ahead of free slots. Fixed, or `auto`:
 * about 250 ms of work at the completion rate measured over the last 50 ms
 * or more, between 1 and 1,000 (or 10 per queue past 100 queues). Until a
 * rate is known it is the concurrency.
 */
export class Prefetch {
  #completed = 0
  #since = performance.now()
  #target: number

  #most = MAX_PREFETCH

  constructor(
    private readonly fixed: number | 'auto',
    concurrency: number,
  ) {
    this.#target = fixed === 'auto' ? concurrency : fixed
  }

  /** The worker's queues are known: `auto` may hold more for many of them. */
  forQueues(count: number): void {
    this.#most = Math.max(MAX_PREFETCH, PREFETCH_PER_QUEUE * count)
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
      this.#target = Math.max(1, Math.min(this.#most, Math.ceil(rate * WINDOW_MS)))
      this.#completed = 0
      this.#since = now
    }
    return this.#target
  }
}
