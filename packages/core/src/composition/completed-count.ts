import type { BrokerContext } from '../runtime/broker-context.js'
import { wrapError } from '../runtime/wrap-error.js'

/**
 * @internal How many of the messages `ids` are done (one primary-key lookup
 * each). A broker with `deleteOnSuccess` deletes messages as they succeed,
 * so there a message that is gone counts as done.
 */
export async function completedCount(core: BrokerContext, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0
  const compiled = (await core.queries())
    .selectFrom('messages')
    .select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n'))
    .where('id', 'in', [...ids])
    .where('state', core.deleteOnSuccess ? '<>' : '=', 'done')
    .compile()
  try {
    const [row] = await core.executor.query<{ n: number }>(compiled.sql, compiled.parameters)
    const n = row?.n ?? 0
    return core.deleteOnSuccess ? ids.length - n : n
  } catch (error) {
    throw wrapError(error, 'count completed messages')
  }
}
