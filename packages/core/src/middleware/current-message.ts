import { AsyncLocalStorage } from 'node:async_hooks'
import type { Message } from '../message/message.js'
import type { Middleware } from '../plugin/middleware-interface.js'

const storage = new AsyncLocalStorage<Message>()

/**
 * The message whose handler is running, anywhere in the handler's async
 * call tree; `undefined` outside a handler (and after it finishes, failures
 * included). Needs `createBroker({ currentMessage: true })` (opt-in, as it
 * costs about 10% of throughput on Node 20); otherwise always `undefined`.
 *
 * @example
 * async function audit(action: string) {
 *   await db.insertInto('audit').values({ action, message_id: currentMessage()?.id ?? null }).execute()
 * }
 */
export function currentMessage(): Message | undefined {
  return storage.getStore()
}

/** @internal */
export function currentMessageMiddleware(): Middleware {
  return {
    process: (event, next) => storage.run(event.message, next),
  }
}
