import { type ActorReference, referenceName } from '../actor/actor-options.js'
import { assertName } from '../actor/names.js'
import { Message } from '../message/message.js'
import { uuid7 } from '../message/uuid7.js'
import type { BrokerContext } from '../runtime/broker-context.js'

/** Options of {@link messageFor}. */
export interface MessageForOptions {
  readonly id?: string
  readonly queue?: string
  readonly priority?: number
  readonly options?: Readonly<Record<string, unknown>>
}

/**
 * @internal A message for an actor by name or reference: its declared queue
 * and priority when this process declares it, else `'default'` and 0.
 */
export function messageFor(
  core: BrokerContext,
  reference: ActorReference,
  args: readonly unknown[],
  options: MessageForOptions = {},
): Message {
  const name = referenceName(reference)
  assertName('actor', name)
  const declared = core.actors.get(name)
  const queue = options.queue ?? declared?.queue ?? 'default'
  assertName('queue', queue)
  return new Message(
    core.host,
    options.id ?? uuid7(),
    name,
    queue,
    [...args],
    options.priority ?? declared?.options.priority ?? 0,
    options.options ?? {},
  )
}
