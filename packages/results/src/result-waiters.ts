import { type Logger, NotificationWaiters, type PluginContext } from '@iddqueue/core'

/**
 * @internal The blocked result waiters of one broker, keyed by message id,
 * woken through its shared LISTEN connection (core's `NotificationWaiters`).
 * Payloads are a message id (core, when it cancels a message) or
 * comma-separated ids (this plugin, per settle batch): each wakes every
 * waiter of its message.
 */
export function resultWaiters(
  context: Pick<PluginContext, 'subscribe' | 'listening'>,
  channel: string,
  logger: Logger,
): NotificationWaiters {
  return new NotificationWaiters(context, channel, logger, {
    what: 'results',
    onNotification(payload, waiters) {
      for (const id of payload.split(',')) waiters.wakeAll(id)
    },
  })
}
