/** Default for {@link BrokerOptions.connectTimeoutMs}. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000

/** The longest pause between two attempts to reconnect, before jitter. */
export const MAX_RECONNECT_DELAY_MS = 250

/**
 * @internal The pause before the `retries`-th consecutive attempt to
 * reconnect, in seconds (postgres.js's `backoff` option): 25 ms doubling up
 * to {@link MAX_RECONNECT_DELAY_MS}, with jitter between half and all of it.
 *
 * postgres.js's own default grows to 20 s and is shared by the pool, so a
 * 0.5 s outage could leave sends and workers waiting tens of seconds after
 * PostgreSQL answered again. With at most 250 ms between attempts, a pool
 * notices a server that is back within a quarter of a second, at the cost
 * of four connection attempts a second while it is down.
 *
 * @example
 * postgres(url, { backoff: reconnectDelaySeconds })
 */
export function reconnectDelaySeconds(retries: number, random: () => number = Math.random): number {
  const ms = Math.min(MAX_RECONNECT_DELAY_MS, 25 * 2 ** Math.max(0, retries - 1))
  return (ms * (0.5 + random() / 2)) / 1_000
}
