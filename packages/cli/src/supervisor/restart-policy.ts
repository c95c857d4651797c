/** @internal What the supervisor does about a child that exited unexpectedly. */
export type RestartDecision =
  | { readonly action: 'restart'; readonly delayMs: number }
  | { readonly action: 'give-up'; readonly crashes: number; readonly windowMs: number }

/** @internal The limits of `RestartPolicy`. */
export interface RestartPolicyOptions {
  /** Most crashes (of all children together) tolerated within `windowMs`; one more is a crash loop. */
  readonly maxRestarts: number
  /** The sliding window crashes are counted in. */
  readonly windowMs: number
  /** The first restart's delay; it doubles with each crash of the same child in a row. */
  readonly initialDelayMs: number
  /** The longest delay between a crash and the restart. */
  readonly maxDelayMs: number
  /** A child that ran this long before crashing starts its backoff afresh. */
  readonly stableAfterMs: number
}

/** @internal The defaults of `iddqueue worker --processes`. */
export const RESTART_DEFAULTS: RestartPolicyOptions = Object.freeze({
  maxRestarts: 5,
  windowMs: 60_000,
  initialDelayMs: 250,
  maxDelayMs: 10_000,
  stableAfterMs: 30_000,
})

/**
 * @internal Decides, for each unexpected exit of a child, whether to restart
 * it and after how long: exponential backoff per child (reset once a child
 * stayed up `stableAfterMs`), and a crash loop, which stops everything, once
 * more than `maxRestarts` crashes fall within `windowMs`. Pure: the caller
 * passes the clock.
 */
export class RestartPolicy {
  readonly #crashes: number[] = []
  readonly #inARow = new Map<number, number>()

  constructor(private readonly options: RestartPolicyOptions = RESTART_DEFAULTS) {}

  /** Child `index`, started at `startedAt`, exited unexpectedly at `now`. */
  crashed(index: number, startedAt: number, now: number): RestartDecision {
    const { maxRestarts, windowMs, initialDelayMs, maxDelayMs, stableAfterMs } = this.options
    this.#crashes.push(now)
    while (this.#crashes.length > 0 && this.#crashes[0]! <= now - windowMs) this.#crashes.shift()
    if (this.#crashes.length > maxRestarts) {
      return { action: 'give-up', crashes: this.#crashes.length, windowMs }
    }
    const previous = now - startedAt >= stableAfterMs ? 0 : (this.#inARow.get(index) ?? 0)
    this.#inARow.set(index, previous + 1)
    return { action: 'restart', delayMs: Math.min(maxDelayMs, initialDelayMs * 2 ** previous) }
  }
}
