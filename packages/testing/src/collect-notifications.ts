import type postgres from 'postgres'
import { waitFor } from './wait-for.js'

/**
 * What {@link collectNotifications} returns.
 *
 * @example
 * const wake: NotificationCollector = await collectNotifications(sql, channel)
 */
export interface NotificationCollector {
  /** Every payload received and not yet taken by `settled()`. */
  readonly payloads: string[]
  /**
   * Everything received so far (and forgets it), after sending a marker and
   * waiting for it: notifications arrive in commit order, so anything
   * committed before the marker has arrived by then, without sleeping.
   */
  settled(): Promise<string[]>
  /** Stops listening. */
  stop(): Promise<void>
}

/**
 * Collects NOTIFY payloads on a channel until stopped: the proof that a
 * commit sent (or did not send) a wake-up, as a signal rather than a sleep.
 *
 * @example
 * const wake = await collectNotifications(sql, broker.namespace.channel('wake'))
 * await actor.send()
 * expect(await wake.settled()).toEqual([actor.queue])
 * await wake.stop()
 */
export async function collectNotifications(
  sql: postgres.Sql,
  channel: string,
): Promise<NotificationCollector> {
  const marker = `__marker_${crypto.randomUUID()}__`
  const payloads: string[] = []
  const listener = await sql.listen(channel, (payload) => payloads.push(payload))
  return {
    payloads,
    async settled(): Promise<string[]> {
      await sql`select pg_notify(${channel}, ${marker})`
      await waitFor(() => payloads.includes(marker), {
        timeoutMs: 5_000,
        message: 'the marker notification',
      })
      return payloads.splice(0).filter((payload) => payload !== marker)
    },
    stop: () => listener.unlisten(),
  }
}
