import { sql } from 'kysely'
import type { DashboardData } from './dashboard-data.js'

/** @internal Messages finished per minute over the last hour: index 0 is the oldest minute. */
export interface Throughput {
  readonly done: readonly number[]
  readonly rejected: readonly number[]
}

/** @internal Minutes the chart covers. */
export const THROUGHPUT_MINUTES = 60

/**
 * @internal One grouped read of the rows finished in the last hour, per queue
 * (or all). It reads retained rows as `queueStats()` does, so the live hub
 * caches it (see `LiveHub.throughput`).
 */
export async function throughput(data: DashboardData): Promise<Map<string, Throughput>> {
  const rows = await data.rows(
    data.db
      .selectFrom('messages')
      .select([
        'queue',
        'state',
        sql<number>`floor(extract(epoch from now() - updated_at) / 60)::int`.as('minute'),
        (eb) => eb.fn.countAll<string>().as('n'),
      ])
      .where('state', 'in', ['done', 'rejected'])
      .where('updated_at', '>', sql<Date>`now() - interval '1 hour'`)
      .groupBy(['queue', 'state', 'minute']),
  )
  const byQueue = new Map<string, { done: number[]; rejected: number[] }>()
  const series = (queue: string) => {
    let found = byQueue.get(queue)
    if (!found) {
      found = {
        done: new Array<number>(THROUGHPUT_MINUTES).fill(0),
        rejected: new Array<number>(THROUGHPUT_MINUTES).fill(0),
      }
      byQueue.set(queue, found)
    }
    return found
  }
  for (const row of rows) {
    const index = THROUGHPUT_MINUTES - 1 - Math.min(THROUGHPUT_MINUTES - 1, Math.max(0, row.minute))
    const n = Number(row.n)
    for (const queue of [row.queue, '']) {
      const target = series(queue)
      if (row.state === 'done') target.done[index]! += n
      else target.rejected[index]! += n
    }
  }
  return byQueue
}
