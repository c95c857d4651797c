import { namespace } from '@iddqueue/schema'
import { Kysely, sql as kyselySql } from 'kysely'
import { PostgresJSDialect } from 'kysely-postgres-js'
import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  type Broker,
  createBroker,
  type IddqueuePlugin,
  InvalidOptionError,
  type Message,
} from '../src/index.js'
import { collectNotifications, setupDatabase } from './helpers.js'

const db = setupDatabase()
/** The wake-up channel of the default namespace (what `broker.namespace.channel('wake')` gives). */
const WAKE = namespace().channel('wake')

/** The application's own tables, written in the same transactions as the messages. */
interface AppDatabase {
  orders: { id: number; status: string }
}

let wake: Awaited<ReturnType<typeof collectNotifications>> | undefined
/** The application's postgres.js pool. */
let appSql: postgres.Sql
/** The application's Kysely instance, on its own postgres.js pool. */
let appDb: Kysely<AppDatabase>

beforeAll(async () => {
  appSql = postgres(db.url, { max: 4, onnotice: () => {} })
  appDb = new Kysely<AppDatabase>({
    dialect: new PostgresJSDialect({ postgres: postgres(db.url, { max: 4, onnotice: () => {} }) }),
  })
  await appSql`create table orders (id int primary key, status text not null)`
})

afterAll(async () => {
  await appDb?.destroy()
  await appSql?.end()
})

beforeEach(async () => {
  await db.sql`truncate iddqueue.messages, iddqueue.deduplication, orders`
  wake = await collectNotifications(db.sql, WAKE)
})

afterEach(async () => {
  await wake?.stop()
  wake = undefined
})

const wakeUps = () => wake!.settled()

/** Counted on the test's own connection: what other sessions see. */
async function visible(): Promise<{ messages: number; orders: number }> {
  const [row] = await db.sql`select
    (select count(*)::int from iddqueue.messages) as messages,
    (select count(*)::int from orders) as orders`
  return { messages: row!.messages as number, orders: row!.orders as number }
}

/** One way for the application to run a transaction: Kysely or postgres.js. */
interface Driver {
  readonly name: string
  /** The pool: not a transaction. */
  readonly pool: () => unknown
  /**
   * Runs `fn` in a transaction, giving it the transaction handle and helpers
   * that run the application's own statements on it.
   */
  begin<T>(
    fn: (
      tx: unknown,
      app: {
        insertOrder(id: number): Promise<void>
        /** The transaction's id and start time: constant while it stays open. */
        identity(): Promise<string>
        countMessages(): Promise<number>
      },
    ) => Promise<T>,
  ): Promise<T>
}

const kyselyDriver: Driver = {
  name: 'a Kysely transaction',
  pool: () => appDb,
  begin: (fn) =>
    appDb.transaction().execute((trx) =>
      fn(trx, {
        async insertOrder(id) {
          await trx.insertInto('orders').values({ id, status: 'paid' }).execute()
        },
        async identity() {
          const { rows } = await kyselySql<{
            identity: string
          }>`select pg_current_xact_id()::text || '@' || now()::text as identity`.execute(trx)
          return rows[0]!.identity
        },
        async countMessages() {
          const { rows } = await kyselySql<{
            n: number
          }>`select count(*)::int as n from iddqueue.messages`.execute(trx)
          return rows[0]!.n
        },
      }),
    ),
}

const postgresJsDriver: Driver = {
  name: 'a postgres.js transaction',
  pool: () => appSql,
  begin: async <T>(fn: Parameters<Driver['begin']>[0]) =>
    (await appSql.begin((tx) =>
      fn(tx, {
        async insertOrder(id) {
          await tx`insert into orders (id, status) values (${id}, 'paid')`
        },
        async identity() {
          const [row] =
            await tx`select pg_current_xact_id()::text || '@' || now()::text as identity`
          return row!.identity as string
        },
        async countMessages() {
          const [row] = await tx`select count(*)::int as n from iddqueue.messages`
          return row!.n as number
        },
      }),
    )) as T,
}

describe.each([kyselyDriver, postgresJsDriver])('sending in $name', (driver) => {
  it('makes the message visible to other sessions only after commit, then wakes workers', async () => {
    const broker = db.broker()
    const receipt = broker.actor('receipt', (orderId: number) => orderId, { queue: 'receipts' })
    let sent: Message | undefined
    await driver.begin(async (tx, app) => {
      await app.insertOrder(1)
      const before = await app.identity()
      sent = await receipt.sendWithOptions({ args: [1], transaction: tx })
      // Still the same open transaction: the broker did not commit it.
      expect(await app.identity()).toBe(before)
      expect(await app.countMessages()).toBe(1)
      expect(await visible()).toEqual({ messages: 0, orders: 0 })
      // The wake-up is held until commit too.
      expect(await wakeUps()).toEqual([])
    })
    expect(await visible()).toEqual({ messages: 1, orders: 1 })
    const rows = await db.sql`select id, queue, state, args from iddqueue.messages`
    expect(rows).toEqual([{ id: sent!.id, queue: 'receipts', state: 'queued', args: [1] }])
    expect(await wakeUps()).toEqual(['receipts'])
  })

  it('leaves no row and no wake-up after a rollback', async () => {
    const broker = db.broker()
    const receipt = broker.actor('receipt', (orderId: number) => orderId, { queue: 'receipts' })
    const failure = new Error('payment declined')
    await expect(
      driver.begin(async (tx, app) => {
        await app.insertOrder(1)
        await receipt.sendWithOptions({ args: [1], transaction: tx, delayMs: 100 })
        await broker.enqueueMany([receipt.message(2), receipt.message(3)], { transaction: tx })
        await broker.enqueue(receipt.message(4), { transaction: tx, priority: 2 })
        expect(await app.countMessages()).toBe(4)
        throw failure
      }),
    ).rejects.toBe(failure)
    expect(await visible()).toEqual({ messages: 0, orders: 0 })
    // No NOTIFY was delivered: the marker, sent after the rollback, arrives
    // first (notifications come in commit order), so no sleep is needed.
    expect(await wakeUps()).toEqual([])
  })

  it('commits one wake-up per queue for the whole transaction', async () => {
    const broker = db.broker()
    const a = broker.actor('a', (n: number) => n, { queue: 'qa' })
    const b = broker.actor('b', (n: number) => n, { queue: 'qb' })
    await driver.begin(async (tx) => {
      await a.sendWithOptions({ args: [1], transaction: tx })
      await a.sendWithOptions({ args: [2], transaction: tx })
      await broker.enqueueMany([a.message(3), b.message(4)], { transaction: tx })
    })
    expect(await visible()).toEqual({ messages: 4, orders: 0 })
    // PostgreSQL folds identical notifications of one transaction into one.
    expect((await wakeUps()).sort()).toEqual(['qa', 'qb'])
  })

  it('stores a message sent again in the same transaction once, and the transaction goes on', async () => {
    const broker = db.broker()
    const receipt = broker.actor('receipt', (orderId: number) => orderId, { queue: 'receipts' })
    const message = receipt.message(1)
    await driver.begin(async (tx, app) => {
      await broker.enqueue(message, { transaction: tx })
      const again = await broker.enqueueMany([message, receipt.message(2)], { transaction: tx })
      expect(again.map((m) => m.args[0])).toEqual([1, 2])
      await app.insertOrder(1)
    })
    expect(await visible()).toEqual({ messages: 2, orders: 1 })
    const [row] = await db.sql`select args from iddqueue.messages where id = ${message.id}`
    expect(row!.args).toEqual([1])
  })

  it('runs a batch in a savepoint: a failed batch leaves the earlier writes to commit', async () => {
    // The batch must fail in SQL, not in validation (which throws before any
    // SQL and so cannot hurt the transaction). Nothing in a valid batch fails
    // in SQL by itself, so an enqueue middleware runs a failing statement
    // through event.executor, the way a plugin writing its own rows might hit
    // a constraint. Without a savepoint, PostgreSQL would abort the caller's
    // whole transaction and the order below could not commit.
    const poison: IddqueuePlugin = {
      name: 'poison',
      middleware: {
        async enqueue(event, next) {
          await next()
          if (event.messages.some((m) => m.args[0] === 'poison')) {
            await event.executor.query('select 1 / 0')
          }
        },
      },
    }
    const broker = db.broker({ plugins: [poison] })
    const job = broker.actor('job', (s: string) => s)
    let kept: Message | undefined
    await driver.begin(async (tx, app) => {
      await app.insertOrder(1)
      kept = await job.sendWithOptions({ args: ['kept'], transaction: tx })
      // A plain batch, and a batch with deduplication keys.
      await expect(
        broker.enqueueMany([job.message('fine'), job.message('poison')], { transaction: tx }),
      ).rejects.toThrow('division by zero')
      await expect(
        broker.enqueueMany(
          [
            { message: job.message('fine'), dedupKey: 'k', dedupTtlMs: 60_000 },
            job.message('poison'),
          ],
          { transaction: tx },
        ),
      ).rejects.toThrow('division by zero')
      // The transaction is still usable.
      await app.insertOrder(2)
      expect(await app.countMessages()).toBe(1)
    })
    expect(await visible()).toEqual({ messages: 1, orders: 2 })
    const rows = await db.sql`select id, args from iddqueue.messages`
    expect(rows).toEqual([{ id: kept!.id, args: ['kept'] }])
    // The key the failed batch claimed was released with its savepoint.
    expect(await db.sql`select key from iddqueue.deduplication`).toEqual([])
    expect(await wakeUps()).toEqual(['default'])
  })

  it('refuses the pool instead of a transaction before any SQL', async () => {
    const queries: string[] = []
    const recorded = postgres(db.url, {
      max: 2,
      onnotice: () => {},
      debug: (_connection, query) => queries.push(query),
    })
    const broker = createBroker({ sql: recorded })
    try {
      const job = broker.actor('job', (n: number) => n)
      const pool = driver.pool()
      const error = await job
        .sendWithOptions({ args: [1], transaction: pool })
        .catch((e: unknown) => e as Error)
      expect(InvalidOptionError.isInstance(error)).toBe(true)
      expect((error as Error).message).toBe(
        'Invalid transaction: got a connection pool, not a transaction; pass the trx of db.transaction().execute(trx => ...) or the tx of sql.begin(tx => ...)',
      )
      await expect(broker.enqueue(job.message(2), { transaction: pool })).rejects.toThrow(
        'got a connection pool, not a transaction',
      )
      await expect(broker.enqueueMany([job.message(3)], { transaction: pool })).rejects.toThrow(
        InvalidOptionError,
      )
      // Even an empty batch checks its transaction.
      await expect(broker.enqueueMany([], { transaction: pool })).rejects.toThrow(
        InvalidOptionError,
      )
      expect(queries).toEqual([])
    } finally {
      await broker.close()
      await recorded.end()
    }
    expect(await visible()).toEqual({ messages: 0, orders: 0 })
    expect(await wakeUps()).toEqual([])
  })
})

describe('transaction handles', () => {
  it.each([
    ['an object', {}],
    ['null', null],
    ['a string', 'begin'],
    ['an executor-like object', { query: async () => [] }],
  ])('refuses %s as a transaction', async (_what, transaction) => {
    const broker = db.broker()
    const job = broker.actor('job', (n: number) => n)
    await expect(job.sendWithOptions({ args: [1], transaction })).rejects.toThrow(
      'Invalid transaction: expected a Kysely transaction (db.transaction().execute(trx => ...)) or a postgres.js transaction (sql.begin(tx => ...))',
    )
    expect(await visible()).toEqual({ messages: 0, orders: 0 })
  })

  it('accepts a postgres.js savepoint inside a transaction', async () => {
    const broker = db.broker()
    const job = broker.actor('job', (n: number) => n)
    await appSql.begin(async (tx) => {
      await tx.savepoint(async (sp) => {
        await job.sendWithOptions({ args: [1], transaction: sp })
      })
      await tx
        .savepoint(async (sp) => {
          await job.sendWithOptions({ args: [2], transaction: sp })
          throw new Error('undo the second')
        })
        .catch(() => {})
    })
    const rows = await db.sql`select args from iddqueue.messages`
    expect(rows).toEqual([{ args: [1] }])
  })
})

describe('a broker on the application Kysely instance', () => {
  it('sends, polls instead of listening, and leaves the instance open on close', async () => {
    const broker: Broker = createBroker({ db: appDb })
    try {
      // Kysely has no LISTEN: the broker is poll-only.
      expect(broker.context.listener.available).toBe(false)
      const job = broker.actor('job', (n: number) => n, { queue: 'kysely' })
      const sent = await job.send(1)
      const [duplicate] = await broker.enqueueMany([
        { message: job.message(2), dedupKey: 'k', dedupTtlMs: 60_000 },
        { message: job.message(3), dedupKey: 'k', dedupTtlMs: 60_000 },
      ])
      await appDb.transaction().execute(async (trx) => {
        await trx.insertInto('orders').values({ id: 1, status: 'paid' }).execute()
        await job.sendWithOptions({ args: [4], transaction: trx })
      })
      const rows = await db.sql`select args from iddqueue.messages order by id`
      expect(rows).toEqual([{ args: [1] }, { args: [2] }, { args: [4] }])
      expect(sent.queue).toBe('kysely')
      expect(duplicate!.args).toEqual([2])
      // The NOTIFY is part of the insert, so listeners elsewhere still wake.
      expect(await wakeUps()).toEqual(['kysely', 'kysely', 'kysely'])
    } finally {
      await broker.close()
    }
    // The application's Kysely instance and its pool still work.
    const { rows } = await kyselySql<{ n: number }>`select count(*)::int as n from orders`.execute(
      appDb,
    )
    expect(rows[0]!.n).toBe(1)
    expect(await appDb.selectFrom('orders').select('status').execute()).toEqual([
      { status: 'paid' },
    ])
  })

  it('leaves the application postgres.js instance open on close', async () => {
    const broker = createBroker({ sql: appSql })
    await broker.actor('job', (n: number) => n).send(1)
    await broker.close()
    const [row] = await appSql`select count(*)::int as n from iddqueue.messages`
    expect(row!.n).toBe(1)
  })
})
