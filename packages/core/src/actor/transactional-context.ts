import type postgres from 'postgres'
import type { ActorContext } from './actor-context.js'

/**
 * The context of a transactional actor (`{ transactional: true }`): an
 * {@link ActorContext} with `transaction`, the transaction the worker opened
 * for this attempt on a connection of its own. The handler's writes through
 * it, the message's acknowledgement (only if the message is still this
 * worker's), the result the results plugin stores, `onSuccess` callbacks,
 * pipeline next steps and messages sent with `{ transaction: ctx.transaction }`
 * commit together or not at all. Never commit or roll it back yourself:
 * throw to roll back.
 *
 * `Tx` is the driver's transaction type: a postgres.js `TransactionSql`
 * (the default) when the broker was given a `url` or a postgres.js `sql`,
 * a Kysely `Transaction<DB>` when it was given a Kysely instance as `db`.
 *
 * @example
 * const charge = broker.actor(
 *   'charge',
 *   async (orderId: string, cents: number, ctx: TransactionalContext) => {
 *     const sql = ctx.transaction
 *     await sql`insert into payments (order_id, cents) values (${orderId}, ${cents})`
 *     await sql`update orders set paid = true where id = ${orderId}`
 *   },
 *   { transactional: true },
 * )
 *
 * @example
 * // With a Kysely broker: createBroker({ db })
 * broker.actor(
 *   'ship',
 *   async (orderId: string, ctx: TransactionalContext<Transaction<Database>>) => {
 *     await ctx.transaction.insertInto('shipments').values({ order_id: orderId }).execute()
 *   },
 *   { transactional: true },
 * )
 */
export interface TransactionalContext<
  Tx = postgres.TransactionSql,
  Args extends readonly unknown[] = readonly unknown[],
> extends ActorContext<Args> {
  readonly transaction: Tx
}
