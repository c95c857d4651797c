import { InvalidOptionError, isUuid } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import { sql } from 'kysely'
import type { DashboardData } from './dashboard-data.js'
import { PAGE_SIZE } from './list-messages.js'

/** @internal A registered worker, with its heartbeat age and how many messages it holds. */
export interface WorkerRow {
  readonly id: string
  readonly host: string
  readonly pid: number
  readonly queues: readonly string[]
  readonly concurrency: number
  readonly started_at: Date
  readonly heartbeat_age_ms: number
  /** Messages it holds (`consumed`): running or prefetched. */
  readonly holding: number
}

/**
 * @internal Workers by id, keyset-paginated on the primary key; the held
 * count is one probe per worker of `messages_consumed (worker_id)`.
 */
export async function listWorkers(
  data: DashboardData,
  options: { readonly after?: string } = {},
): Promise<{ readonly items: readonly WorkerRow[]; readonly nextAfter: string | null }> {
  if (options.after !== undefined && !isUuid(options.after))
    throw new InvalidOptionError(`Invalid cursor ${describeValue(options.after)}: expected a UUID`)
  let query = data.db
    .selectFrom('workers as w')
    .select([
      'w.id',
      'w.host',
      'w.pid',
      'w.queues',
      'w.concurrency',
      'w.started_at',
      sql<number>`(extract(epoch from now() - w.heartbeat_at) * 1000)::float8`.as(
        'heartbeat_age_ms',
      ),
      (eb) =>
        eb
          .selectFrom('messages as m')
          .select(eb.fn.countAll<number>().as('n'))
          .whereRef('m.worker_id', '=', 'w.id')
          .where('m.state', '=', 'consumed')
          .as('holding'),
    ])
    .orderBy('w.id')
    .limit(PAGE_SIZE + 1)
  if (options.after !== undefined) query = query.where('w.id', '>', options.after)
  const rows = await data.rows(query)
  const more = rows.length > PAGE_SIZE
  const items = (more ? rows.slice(0, PAGE_SIZE) : rows).map((row) => ({
    ...row,
    holding: Number(row.holding ?? 0),
  }))
  return { items, nextAfter: more ? items[items.length - 1]!.id : null }
}
