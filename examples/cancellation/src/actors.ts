import type { ActorContext, Broker } from '@iddqueue/core'
import type { Sql } from 'postgres'

/**
 * The actors, declared the same way by the worker process and by the process
 * that sends and cancels (which never runs them).
 */
export function declareActors(broker: Broker, sql: Sql) {
  const exportRows = broker.actor(
    'export_rows',
    async (table: string, ctx: ActorContext) => {
      for (let page = 1; page <= 10_000; page++) {
        // A cooperative handler: it checks its signal between pages. Throwing
        // after a cancellation request ends the message `cancelled`.
        ctx.signal.throwIfAborted()
        await sql`insert into export_progress (message_id, page) values (${ctx.message.id}, ${page})
                  on conflict (message_id) do update set page = excluded.page`
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return { table, pages: 10_000 }
    },
    { queue: 'exports', maxRetries: 0 },
  )
  const sendNewsletter = broker.actor(
    'send_newsletter',
    async (issue: string) => console.log(`sending newsletter ${issue}`),
    { queue: 'newsletters' },
  )
  return { exportRows, sendNewsletter }
}
