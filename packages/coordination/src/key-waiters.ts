import {
  type Logger,
  type NotificationWaiter,
  NotificationWaiters,
  type PluginContext,
} from '@iddqueue/core'

/** @internal One blocked acquire or barrier wait, woken by a notification for its key. */
export type KeyWaiter = NotificationWaiter

/**
 * @internal The blocked waiters of one broker, woken through its shared
 * LISTEN connection (core's `NotificationWaiters`).
 *
 * A payload is `one:<key>` (a slot was released: wake one waiter of the
 * key, as only one can take it) or `all:<key>` (a barrier opened: wake
 * every waiter). A woken waiter that leaves without using its signal hands
 * it on, so a release is not lost inside the process.
 */
export class KeyWaiters extends NotificationWaiters {
  constructor(
    context: Pick<PluginContext, 'subscribe' | 'listening'>,
    channel: string,
    logger: Logger,
  ) {
    super(context, channel, logger, {
      what: 'coordination releases',
      handOff: true,
      onNotification(payload, waiters) {
        const key = payload.slice(payload.indexOf(':') + 1)
        if (payload.startsWith('all:')) waiters.wakeAll(key)
        else waiters.wakeOne(key)
      },
    })
  }
}
