import { Kysely, type Transaction } from 'kysely'
import { PostgresJSDialect } from 'kysely-postgres-js'
import postgres from 'postgres'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  attemptHistory,
  createBroker,
  InvalidOptionError,
  TransactionalActorError,
  type TransactionalContext,
} from '../src/index.js'
import { setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()
/** The bound on each wait for an outcome; the tests' own timeout leaves room for it. */
const WAIT_MS = 60_000

interface Effects {
  effects: { message_id: string; note: string }
}

beforeAll(async () => {
  // No unique constraint on purpose: a second commit of an effect would show as a second row.
  await db.sql`create table if not exists effects (message_id uuid not null, note text not null)`
})

async function effects(id: string): Promise<string[]> {
  const rows = await db.sql`select note from effects where message_id = ${id}`
  return rows.map((r) => r.note as string)
}

async function stateOf(id: string) {
  const [row] = await db.sql`select state, retries, failure from iddqueue.messages where id = ${id}`
  return row as { state: string; retries: number; failure: { type: string } | null } | undefined
}

function gate() {
  let open: () => void = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { open, opened }
}

describe('transactional actors', { timeout: WAIT_MS + 15_000 }, () => {
  it('commits the handler writes, the ack, the attempt history and the onSuccess callback together', async () => {
    const history = attemptHistory()
    const broker = db.broker({ plugins: [history] })
    const queue = uniqueQueue('tx')
    const receipts: string[] = []
    const receipt = broker.actor(
      'receipt',
      (_message: unknown, result: unknown) => {
        receipts.push(String(result))
      },
      { queue },
    )
    const pay = broker.actor(
      'pay',
      async (cents: number, ctx: TransactionalContext) => {
        await ctx.transaction`insert into effects values (${ctx.message.id}, ${`paid ${cents}`})`
        return `receipt ${cents}`
      },
      { queue, transactional: true, onSuccess: receipt },
    )
    const message = await pay.send(42)
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await until(() => receipts.length === 1, WAIT_MS, 'the onSuccess callback')
    await worker.stop()
    expect(await effects(message.id)).toEqual(['paid 42'])
    expect((await stateOf(message.id))?.state).toBe('done')
    expect(receipts).toEqual(['receipt 42'])
    const { items } = await history.listAttempts(message.id)
    expect(items.map((a) => a.status)).toEqual(['successful'])
  })

  it.each([false, true])(
    "commits with the server's synchronous_commit, never the batch's 'off' (deleteOnSuccess %s)",
    async (deleteOnSuccess) => {
      // The server's own setting ('on' by default; the embedded test server
      // runs with 'off'): a transactional run must not lower it, as the
      // worker's batch settles do (decision 0007).
      const [server] = await db.sql<
        { mode: string }[]
      >`select current_setting('synchronous_commit') as mode`
      const modes: string[] = []
      const broker = db.broker({
        deleteOnSuccess,
        plugins: [
          {
            name: 'commit-mode',
            middleware: {
              async settle(event) {
                const [row] = await event.executor.query<{ mode: string }>(
                  `select current_setting('synchronous_commit') as mode`,
                )
                modes.push(row!.mode)
              },
            },
          },
        ],
      })
      const queue = uniqueQueue('tx')
      const job = broker.actor(
        'durable',
        async (ctx: TransactionalContext) => {
          await ctx.transaction`insert into effects values (${ctx.message.id}, 'durable')`
        },
        { queue, transactional: true },
      )
      const message = await job.send()
      const worker = broker.worker({ pollIntervalMs: 50 })
      await worker.start()
      await until(() => modes.length === 1, WAIT_MS, 'the settle hook')
      await worker.stop()
      expect(modes).toEqual([server!.mode])
      expect(await effects(message.id)).toEqual(['durable'])
    },
  )

  it('a graceful stop waits up to shutdownTimeoutMs, then rolls back and returns the message', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('tx')
    const started = gate()
    const never = gate()
    const job = broker.actor(
      'stuck',
      async (ctx: TransactionalContext) => {
        await ctx.transaction`insert into effects values (${ctx.message.id}, 'stuck')`
        started.open()
        await never.opened
      },
      { queue, transactional: true },
    )
    const message = await job.send()
    const worker = broker.worker({ pollIntervalMs: 50, shutdownTimeoutMs: 300 })
    await worker.start()
    await started.opened
    await worker.stop()
    never.open()
    expect((await stateOf(message.id))?.state).toBe('queued')
    expect(await effects(message.id)).toEqual([])
  })

  it('rolls back a throwing handler, records the attempt, retries, then commits once', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('tx')
    let attempts = 0
    const flaky = broker.actor(
      'flaky',
      async (ctx: TransactionalContext) => {
        attempts++
        await ctx.transaction`insert into effects values (${ctx.message.id}, ${`attempt ${ctx.attempt}`})`
        if (ctx.attempt === 1) throw new Error('card network down')
      },
      { queue, transactional: true, minBackoffMs: 0, maxBackoffMs: 0 },
    )
    const message = await flaky.send()
    const failed: number[] = []
    broker.on('message:failed', (event) => failed.push(event.attempt))
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await until(async () => (await stateOf(message.id))?.state === 'done', WAIT_MS, 'done')
    await worker.stop()
    expect(attempts).toBe(2)
    expect(failed).toEqual([1])
    expect(await effects(message.id)).toEqual(['attempt 2'])
    expect((await stateOf(message.id))?.retries).toBe(1)
  })

  it('rolls back when the message is no longer this worker’s: no effect, no callback, logged', async () => {
    const warnings: string[] = []
    const logger = {
      debug() {},
      info() {},
      warn: (text: string) => warnings.push(text),
      error() {},
    }
    const broker = db.broker({ logger })
    const queue = uniqueQueue('tx')
    const started = gate()
    const proceed = gate()
    const sent: unknown[] = []
    const callback = broker.actor('after_taken', (...args: unknown[]) => sent.push(args), {
      queue,
    })
    const taken = broker.actor(
      'taken',
      async (ctx: TransactionalContext) => {
        await ctx.transaction`insert into effects values (${ctx.message.id}, 'first worker')`
        started.open()
        await proceed.opened
      },
      { queue, transactional: true, onSuccess: callback },
    )
    const message = await taken.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await started.opened
    // What crash recovery does when this worker looked dead: the message goes back to the queue.
    await db.sql`update iddqueue.messages set state = 'queued', worker_id = null, eta = now() + interval '1 hour'
      where id = ${message.id}`
    proceed.open()
    await until(() => warnings.some((w) => w.includes('commit refused')), WAIT_MS, 'the warning')
    expect(worker.state).toBe('running')
    await worker.stop()
    expect(await effects(message.id)).toEqual([])
    expect((await stateOf(message.id))?.state).toBe('queued')
    expect(sent).toEqual([])
    expect(await db.sql`select 1 from iddqueue.messages where actor = 'after_taken'`).toHaveLength(
      0,
    )
  })

  it('rolls back on cancellation during the handler: cancelled, no effect', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('tx')
    const started = gate()
    const released = gate()
    const job = broker.actor(
      'cancel_me',
      async (ctx: TransactionalContext) => {
        await ctx.transaction`insert into effects values (${ctx.message.id}, 'written')`
        started.open()
        // Ignores its signal on purpose: the rollback must not depend on the handler.
        await released.opened
      },
      { queue, transactional: true },
    )
    const message = await job.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await started.opened
    await broker.cancel(message.id)
    await until(async () => (await stateOf(message.id))?.state === 'cancelled', WAIT_MS, 'cancel')
    // Cancelled while the handler is still blocked; released, it cannot commit.
    released.open()
    await worker.stop()
    expect(await effects(message.id)).toEqual([])
  })

  it('rolls back on the time limit: the attempt fails, no effect', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('tx')
    const job = broker.actor(
      'too_slow',
      async (ctx: TransactionalContext) => {
        await ctx.transaction`insert into effects values (${ctx.message.id}, 'written')`
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
      },
      { queue, transactional: true, timeLimitMs: 200, maxRetries: 0 },
    )
    const message = await job.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await until(async () => (await stateOf(message.id))?.state === 'rejected', WAIT_MS, 'rejected')
    await worker.stop()
    expect((await stateOf(message.id))?.failure?.type).toBe('TimeLimitExceeded')
    expect(await effects(message.id)).toEqual([])
  })

  it('holds at most poolSize - 2 transactions at once; other actors in the worker still run', async () => {
    const broker = db.broker({ poolSize: 4 })
    const queue = uniqueQueue('tx')
    let open = 0
    let most = 0
    const job = broker.actor(
      'bounded',
      async (ctx: TransactionalContext) => {
        open++
        most = Math.max(most, open)
        await ctx.transaction`select pg_sleep(0.02)`
        await ctx.transaction`insert into effects values (${ctx.message.id}, 'bounded')`
        open--
      },
      { queue, transactional: true },
    )
    let plain = 0
    const other = broker.actor(
      'plain',
      () => {
        plain++
      },
      { queue },
    )
    const messages = await broker.enqueueMany(Array.from({ length: 20 }, () => job.message()))
    await broker.enqueueMany(Array.from({ length: 20 }, () => other.message()))
    const worker = broker.worker({ concurrency: 10, pollIntervalMs: 50 })
    await worker.start()
    await until(
      async () =>
        (
          await db.sql`select 1 from iddqueue.messages where queue = ${queue}
      and state = 'done'`
        ).length === 40,
      WAIT_MS,
      'all done',
    )
    await worker.stop()
    expect(most).toBeLessThanOrEqual(2)
    expect(plain).toBe(20)
    const [row] = await db.sql`select count(*)::int as n from effects
      where message_id = any(${messages.map((m) => m.id)}::uuid[])`
    expect(row?.n).toBe(20)
  })

  it('gives a Kysely transaction when the broker was given a Kysely instance', async () => {
    const kysely = new Kysely<Effects>({
      dialect: new PostgresJSDialect({ postgres: postgres(db.url, { max: 4 }) }),
    })
    const broker = db.broker({ url: undefined, db: kysely, pollOnly: true } as never)
    const queue = uniqueQueue('tx')
    const job = broker.actor(
      'kysely_effect',
      async (ctx: TransactionalContext<Transaction<Effects>>) => {
        await ctx.transaction
          .insertInto('effects')
          .values({ message_id: ctx.message.id, note: 'kysely' })
          .execute()
      },
      { queue, transactional: true },
    )
    const message = await job.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await until(async () => (await stateOf(message.id))?.state === 'done', WAIT_MS, 'done')
    // The order an application ends in: the worker, the broker, then the pool.
    await worker.stop()
    await broker.close()
    await kysely.destroy()
    expect(await effects(message.id)).toEqual(['kysely'])
  })

  it('refuses configurations that cannot work, before any SQL', async () => {
    const broker = db.broker()
    expect(() => broker.actor('bad', () => {}, { transactional: 'yes' as never })).toThrow(
      InvalidOptionError,
    )
    broker.actor('ok', () => {}, { transactional: true })
    expect(() => broker.worker({ transactionalConcurrency: 9 })).toThrow(TransactionalActorError)
    expect(() => broker.worker({ transactionalConcurrency: 9 })).toThrow(/at most 8/)
    const small = db.broker({ poolSize: 2 })
    small.actor('ok', () => {}, { transactional: true })
    expect(() => small.worker()).toThrow(TransactionalActorError)
    await db.sql.begin(async (tx) => {
      const inside = createBroker({ sql: tx })
      try {
        expect(() => inside.actor('t', () => {}, { transactional: true })).toThrow(
          TransactionalActorError,
        )
        expect(
          TransactionalActorError.isInstance(
            catchError(() => inside.actor('t2', () => {}, { transactional: true })),
          ),
        ).toBe(true)
        expect(
          InvalidOptionError.isInstance(
            catchError(() => inside.actor('t3', () => {}, { transactional: true })),
          ),
        ).toBe(true)
      } finally {
        await inside.close()
      }
    })
  })
})

function catchError(fn: () => unknown): unknown {
  try {
    fn()
  } catch (error) {
    return error
  }
  return undefined
}
