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

/**
 * The notification channels iddqueue's packages use in a namespace, by
 * purpose (`namespace.channel(purpose)`): core's wake-ups and control
 * messages, and the results, coordination and scheduler plugins' own.
 */
export const NOTIFICATION_PURPOSES = [
  'wake',
  'control',
  'result',
  'coordination',
  'schedule',
] as const

/** One of {@link NOTIFICATION_PURPOSES}. */
export type NotificationPurpose = (typeof NOTIFICATION_PURPOSES)[number]

/**
 * What {@link collectNamespaceNotifications} returns.
 *
 * @example
 * const all: NamespaceNotificationCollector = await collectNamespaceNotifications(sql, broker.namespace)
 */
export interface NamespaceNotificationCollector {
  /** Each channel's collector, by purpose. */
  readonly channels: Readonly<Record<NotificationPurpose, NotificationCollector>>
  /** Every channel's payloads received so far (and forgets them), each settled by its marker. */
  settled(): Promise<Record<NotificationPurpose, string[]>>
  /** Stops listening on every channel. */
  stop(): Promise<void>
}

/**
 * Collects the payloads of every channel of a namespace
 * ({@link NOTIFICATION_PURPOSES}): for tests that check what notifications
 * carry, or that two namespaces never hear each other.
 *
 * @example
 * const all = await collectNamespaceNotifications(sql, broker.namespace)
 * await actor.send('secret')
 * expect(JSON.stringify(await all.settled())).not.toContain('secret')
 * await all.stop()
 */
export async function collectNamespaceNotifications(
  sql: postgres.Sql,
  namespace: { channel(purpose: string): string },
): Promise<NamespaceNotificationCollector> {
  const collectors = await Promise.all(
    NOTIFICATION_PURPOSES.map((purpose) => collectNotifications(sql, namespace.channel(purpose))),
  )
  const channels = Object.fromEntries(
    NOTIFICATION_PURPOSES.map((purpose, i) => [purpose, collectors[i]!]),
  ) as Record<NotificationPurpose, NotificationCollector>
  return {
    channels,
    async settled() {
      const payloads = await Promise.all(collectors.map((collector) => collector.settled()))
      return Object.fromEntries(
        NOTIFICATION_PURPOSES.map((purpose, i) => [purpose, payloads[i]!]),
      ) as Record<NotificationPurpose, string[]>
    },
    async stop() {
      await Promise.all(collectors.map((collector) => collector.stop()))
    },
  }
}
