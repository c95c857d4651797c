import { Message } from '../message/message.js'
import type { Delivery } from './delivery.js'
import type { SettleBatcher } from './settle-batcher.js'

/** @internal What `release` needs of a claimed message. */
export type Releasable = Pick<Delivery, 'id' | 'actor' | 'queue' | 'retries'>

/**
 * @internal Returns unstarted messages to the queue through the completer,
 * eta and retry budget intact (a pause, a graceful stop, a claim that came
 * back after the worker began stopping).
 */
export function release(settler: SettleBatcher, deliveries: readonly Releasable[]): void {
  for (const delivery of deliveries) {
    settler.add({
      message: new Message(undefined, delivery.id, delivery.actor, delivery.queue, [], 0, {}),
      outcome: { kind: 'requeue' },
      attempt: delivery.retries + 1,
      followUps: [],
    })
  }
}
