import { type Executor, MESSAGE_STATES, type MessageState, type Namespace } from '@iddqueue/schema'
import { createQueryBuilder } from '@iddqueue/schema/kysely'
import { sql } from 'kysely'

/**
 * @internal One queue's messages: a count per state, plus `ready` (queued
 * and due now), `scheduled` (queued or claimed with a future eta) and the
 * age in seconds of the oldest ready message.
 */
export type QueueStats = { readonly queue: string } & Readonly<Record<MessageState, number>> & {
    readonly ready: number
    readonly scheduled: number
    readonly oldestReadySeconds: number
  }

type Row = { queue: string } & Record<MessageState | 'ready' | 'scheduled', string> & {
    oldest_ready_seconds: number | null
  }

/**
 * @internal Counts the messages of every queue (or of one, zeros included
 * when it holds none) in one grouped scan. Read-only.
 *
 * The scan covers retained finished rows too, so its cost grows with the
 * retention; it is meant for people and scrapes, not a hot path.
 */
export async function queueStats(
  executor: Executor,
  ns: Namespace,
  queue?: string,
): Promise<QueueStats[]> {
  let query = createQueryBuilder(ns)
    .selectFrom('messages')
    .select((eb) => [
      'queue',
      ...MESSAGE_STATES.map((state) =>
        eb.fn.countAll<string>().filterWhere('state', '=', state).as(state),
      ),
      eb.fn
        .countAll<string>()
        .filterWhere((f) => f.and([f('state', '=', 'queued'), f('eta', '<=', sql<Date>`now()`)]))
        .as('ready'),
      eb.fn
        .countAll<string>()
        .filterWhere((f) =>
          f.and([f('state', 'in', ['queued', 'consumed']), f('eta', '>', sql<Date>`now()`)]),
        )
        .as('scheduled'),
      // A message is ready since it was last queued (enqueue, retry, recovery) or its eta, the later.
      sql<number | null>`extract(epoch from now() - min(greatest(eta, updated_at))
        filter (where state = 'queued' and eta <= now()))::float8`.as('oldest_ready_seconds'),
    ])
    .groupBy('queue')
    .orderBy('queue')
  if (queue !== undefined) query = query.where('queue', '=', queue)
  const compiled = query.compile()
  const rows = await executor.query<Row>(compiled.sql, compiled.parameters)
  if (rows.length === 0 && queue !== undefined) return [empty(queue)]
  return rows.map((row) => ({
    queue: row.queue,
    ...(Object.fromEntries(MESSAGE_STATES.map((state) => [state, Number(row[state])])) as Record<
      MessageState,
      number
    >),
    ready: Number(row.ready),
    scheduled: Number(row.scheduled),
    oldestReadySeconds: Math.max(0, row.oldest_ready_seconds ?? 0),
  }))
}

function empty(queue: string): QueueStats {
  return {
    queue,
    ...(Object.fromEntries(MESSAGE_STATES.map((state) => [state, 0])) as Record<
      MessageState,
      number
    >),
    ready: 0,
    scheduled: 0,
    oldestReadySeconds: 0,
  }
}
