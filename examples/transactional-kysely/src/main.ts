/**
 * Transactional enqueue with Kysely: an order row and the message that sends
 * its receipt commit together, or not at all.
 *
 * 1. Order 1 is placed: the order and its receipt message commit together.
 * 2. Order 2 is placed, then the transaction fails (a payment check throws):
 *    neither the order nor its message exists afterwards.
 * 3. A worker runs the queue: exactly one receipt, for order 1.
 *
 * Uses DATABASE_URL when set, otherwise an embedded PostgreSQL, and a fresh
 * database that is dropped at the end. Exits non-zero if any check fails.
 *
 *   pnpm --filter @iddqueue-example/transactional-kysely build && pnpm --filter @iddqueue-example/transactional-kysely start
 */
import assert from 'node:assert/strict'
import { createBroker } from '@iddqueue/core'
import { createTestDatabase, startTestDatabase } from '@iddqueue/testing'
import { type Generated, Kysely, sql } from 'kysely'
import { PostgresJSDialect } from 'kysely-postgres-js'
import postgres from 'postgres'

interface AppDatabase {
  orders: { id: Generated<number>; customer: string; total_cents: number }
  receipts: { order_id: number; sent_at: Generated<Date> }
}

const server = await startTestDatabase({ log: (line) => console.error(line) })
const database = await createTestDatabase(server.url, { prefix: 'example_transactional' })
const pool = postgres(database.url, { max: 5, onnotice: () => {} })
const db = new Kysely<AppDatabase>({ dialect: new PostgresJSDialect({ postgres: pool }) })
// The broker uses the application's Kysely instance: its pool, its transactions.
const broker = createBroker({ db })

try {
  await broker.migrate()
  await db.schema
    .createTable('orders')
    .addColumn('id', 'serial', (column) => column.primaryKey())
    .addColumn('customer', 'text', (column) => column.notNull())
    .addColumn('total_cents', 'integer', (column) => column.notNull())
    .execute()
  await db.schema
    .createTable('receipts')
    .addColumn('order_id', 'integer', (column) => column.primaryKey().references('orders.id'))
    .addColumn('sent_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute()

  const sendReceipt = broker.actor(
    'send_receipt',
    async (orderId: number) => {
      // A real app would email the customer here. The insert is idempotent:
      // delivery is at least once, so a redelivered message must not fail.
      await db
        .insertInto('receipts')
        .values({ order_id: orderId })
        .onConflict((conflict) => conflict.column('order_id').doNothing())
        .execute()
    },
    { queue: 'receipts' },
  )

  /** Stores an order and its receipt message in one transaction. */
  async function placeOrder(customer: string, totalCents: number): Promise<number> {
    return db.transaction().execute(async (trx) => {
      const order = await trx
        .insertInto('orders')
        .values({ customer, total_cents: totalCents })
        .returning('id')
        .executeTakeFirstOrThrow()
      await sendReceipt.sendWithOptions({ args: [order.id], transaction: trx })
      if (totalCents <= 0) throw new Error(`order total must be positive, got ${totalCents}`)
      return order.id
    })
  }

  const paid = await placeOrder('ada@example.com', 4_200)
  console.log(`placed order ${paid}: the order and its receipt message committed together`)

  await assert.rejects(placeOrder('bob@example.com', 0), /order total must be positive/)
  console.log('a failed order rolled back: no order row, no message')

  const queued = await sql<{ n: number }>`
    select count(*)::int as n from iddqueue.messages where actor = 'send_receipt'`.execute(db)
  assert.equal(queued.rows[0]?.n, 1, 'exactly one message was stored: the rolled-back one vanished')
  const orders = await db.selectFrom('orders').select('id').execute()
  assert.deepEqual(
    orders.map((row) => row.id),
    [paid],
  )

  const worker = broker.worker({ queues: ['receipts'] })
  await worker.start()
  await broker.join({ queues: ['receipts'], timeoutMs: 30_000 })
  await worker.stop()

  const receipts = await db.selectFrom('receipts').select('order_id').execute()
  assert.deepEqual(
    receipts.map((row) => row.order_id),
    [paid],
    'one receipt, for the committed order only',
  )
  console.log(JSON.stringify({ orders: orders.length, receipts: receipts.length, ok: true }))
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  await broker.close()
  await db.destroy()
  await database.drop()
  await server.stop()
}
