/**
 * The delay before the `retry`-th retry (1-based): a random time between
 * half and all of `min(minBackoffMs × 2^(retry−1), maxBackoffMs)`. The jitter
 * spreads retries of messages that failed together.
 *
 * @example
 * computeBackoff(1, { minBackoffMs: 1000, maxBackoffMs: 60_000 }) // 500 to 1000
 * computeBackoff(4, { minBackoffMs: 1000, maxBackoffMs: 60_000 }) // 4000 to 8000
 */
export function computeBackoff(
  retry: number,
  options: { readonly minBackoffMs: number; readonly maxBackoffMs: number },
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(retry - 1, 0), 52)
  const ceiling = Math.min(options.minBackoffMs * 2 ** exponent, options.maxBackoffMs)
  return Math.round(ceiling / 2 + random() * (ceiling / 2))
}
