/**
 * What a granted `acquire()` returns: release it when done (a concurrent
 * slot is then free for the next holder; bucket and window tokens are
 * spent and release does nothing). `await using` releases it at the end of
 * the block.
 *
 * @example
 * {
 *   await using lease = await limiter.acquire({ waitMs: 5_000 })
 *   await callExternalApi()
 * } // released here, even when callExternalApi() throws
 */
export interface Lease extends AsyncDisposable {
  /** The limiter's key. */
  readonly key: string
  /** When it was granted, by PostgreSQL's clock. */
  readonly acquiredAt: Date
  /**
   * When the grant lapses: a concurrent slot's TTL (after which another
   * holder may take it even if this one still runs), the end of a bucket,
   * or when a window hit stops counting.
   */
  readonly expiresAt: Date
  /** Frees a concurrent slot; true when it was still held. Always false for bucket and window tokens. */
  release(): Promise<boolean>
}

/** @internal A lease with a release function. */
export class LimiterLease implements Lease {
  #released = false

  constructor(
    readonly key: string,
    readonly acquiredAt: Date,
    readonly expiresAt: Date,
    private readonly free: (() => Promise<boolean>) | undefined,
  ) {}

  async release(): Promise<boolean> {
    if (this.#released || !this.free) return false
    this.#released = true
    return this.free()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release()
  }
}
