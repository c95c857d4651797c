import type { BrokerContext } from '../broker/broker-context.js'
import { wrapError } from '../broker/wrap-error.js'

/** @internal How many of the messages `ids` are done (one primary-key lookup each). */
export async function completedCount(core: BrokerContext, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0
  const compiled = (await core.queries())
    .selectFrom('messages')
    .select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('done'))
    .where('id', 'in', [...ids])
    .where('state', '=', 'done')
    .compile()
  try {
    const [row] = await core.executor.query<{ done: number }>(compiled.sql, compiled.parameters)
    return row?.done ?? 0
  } catch (error) {
    throw wrapError(error, 'count completed messages')
  }
}
