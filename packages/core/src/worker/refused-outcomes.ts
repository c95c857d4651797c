import type { Message } from '../message/message.js'
import type { Outcome } from '../plugin/middleware-interface.js'
import type { BrokerContext } from '../runtime/broker-context.js'

/** Ids named in the warning; the event carries them all. */
const IDS_LOGGED = 20

/** @internal An outcome the guarded settle statements did not write. */
export interface RefusedOutcome {
  readonly message: Message
  readonly outcome: Outcome
}

/**
 * @internal Makes refused outcomes visible: one `messages:refused` event
 * and, unless the caller already said why (a transactional run's refused
 * commit), one warning naming how many of the batch's `sent` outcomes were
 * refused and why.
 */
export function reportRefused(
  core: BrokerContext,
  workerId: string,
  refused: readonly RefusedOutcome[],
  sent: number,
  options: { readonly log?: boolean } = {},
): void {
  if (refused.length === 0) return
  if (options.log !== false) {
    core.logger.warn(
      `${refused.length} of ${sent} message outcomes refused: the messages were no longer held by this worker (crash recovery queued them again after it was presumed dead, or they were cancelled or deleted meanwhile); the outcomes written by their new owners stand`,
      {
        worker: workerId,
        refused: refused.length,
        sent,
        messages: refused.slice(0, IDS_LOGGED).map((r) => r.message.id),
      },
    )
  }
  if (!core.events.has('messages:refused')) return
  core.events.emit('messages:refused', {
    workerId,
    messages: refused.map(({ message, outcome }) => ({
      id: message.id,
      queue: message.queue,
      actor: message.actor,
      outcome: outcome.kind,
    })),
  })
}
