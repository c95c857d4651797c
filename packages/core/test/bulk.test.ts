import { describe, expect, it } from 'vitest'
import {
  type ActorContext,
  createBroker,
  InvalidIdentifierError,
  InvalidOptionError,
} from '../src/index.js'
import { setupDatabase, states, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

/** Inserts `count` rejected messages of `actor` on `queue`, last changed an hour ago. */
async function seedRejected(
  queue: string,
  actor: string,
  count: number,
  options: { errorType?: string; table?: string } = {},
) {
  const failure = JSON.stringify({
    type: options.errorType ?? 'TypeError',
    message: 'boom',
    at: new Date().toISOString(),
    attempt: 1,
  })
  await db.sql.unsafe(
    `insert into ${options.table ?? 'iddqueue.messages'}
       (id, queue, actor, state, args, attempts, failure, updated_at)
     select gen_random_uuid(), $1, $2, 'rejected', jsonb_build_array(n), 1, $3::text::jsonb,
            now() - interval '1 hour'
       from generate_series(1, $4::int) as n`,
    [queue, actor, failure, count],
  )
}

describe('retryFailed by filter', () => {
  it('retries 10,000 rejected messages in batches, each once, while a worker keeps rejecting others', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('bulk')
    await seedRejected(queue, 'seeded', 10_000)
    const [{ cutoff }] = (await db.sql`select now() as cutoff`) as unknown as [{ cutoff: Date }]
    const runs = new Map<number, number>()
    broker.actor(
      'seeded',
      (n: number) => {
        runs.set(n, (runs.get(n) ?? 0) + 1)
        throw new TypeError(`seeded ${n} fails again`)
      },
      { queue, maxRetries: 0 },
    )
    const flaky = broker.actor(
      'flaky',
      (n: number) => {
        throw new RangeError(`flaky ${n}`)
      },
      { queue, maxRetries: 0 },
    )
    const worker = broker.worker({ queues: [queue], concurrency: 16 })
    await worker.start()
    // Other messages are rejected before and during the bulk retries.
    let producing = true
    const producer = (async () => {
      for (let i = 0; producing; i++) {
        await broker.enqueueMany(Array.from({ length: 50 }, (_, j) => flaky.message(i * 50 + j)))
        await until(
          async () => ((await states(db.sql, { queue })).queued ?? 0) < 200,
          60_000,
          'the worker to keep up',
        )
      }
    })()
    await until(
      async () => (await broker.listFailed({ queue, actor: 'flaky', limit: 1 })).items.length > 0,
      30_000,
      'a flaky message to be rejected',
    )
    const filter = { queue, failedBefore: cutoff }
    expect(await broker.retryFailed({ ...filter, dryRun: true })).toEqual({
      retried: 10_000,
      dryRun: true,
    })
    const batches: number[][] = [[], []]
    // Two concurrent bulk retries: one winner per message.
    const [a, b] = await Promise.all(
      [0, 1].map((i) =>
        broker.retryFailed({
          ...filter,
          batchSize: 500,
          onProgress: ({ retried }) => batches[i]!.push(retried),
        }),
      ),
    )
    expect(a!.retried + b!.retried).toBe(10_000)
    for (const [i, result] of [a!, b!].entries()) {
      const totals = batches[i]!
      expect(totals.at(-1) ?? 0).toBe(result.retried)
      for (const [k, total] of totals.entries()) {
        expect(total - (totals[k - 1] ?? 0)).toBeLessThanOrEqual(500)
      }
    }
    producing = false
    await producer
    await broker.join({ queues: [queue], timeoutMs: 120_000 })
    await worker.stop()
    // Each seeded message ran once more and was rejected again, never retried twice.
    expect(runs.size).toBe(10_000)
    expect([...runs.values()].every((n) => n === 1)).toBe(true)
    const [seeded] =
      await db.sql`select count(*)::int as n, min(attempts) as lo, max(attempts) as hi
      from iddqueue.messages where queue = ${queue} and actor = 'seeded' and state = 'rejected'`
    expect(seeded).toEqual({ n: 10_000, lo: 2, hi: 2 })
    // Nothing left matches the cutoff: a second call retries nothing.
    expect(await broker.retryFailed(filter)).toEqual({ retried: 0, dryRun: false })
  }, 240_000)

  it('filters by actor, error type and time, and never touches other queues or namespaces', async () => {
    const broker = db.broker()
    const other = db.broker({ namespace: { schema: 'bulk_other' } })
    await other.migrate()
    const queue = uniqueQueue('filters')
    const elsewhere = uniqueQueue('elsewhere')
    await seedRejected(queue, 'a', 3, { errorType: 'TypeError' })
    await seedRejected(queue, 'a', 4, { errorType: 'RangeError' })
    await seedRejected(queue, 'b', 5, { errorType: 'TypeError' })
    await seedRejected(elsewhere, 'a', 6, { errorType: 'TypeError' })
    await seedRejected(queue, 'a', 7, { table: 'bulk_other.messages', errorType: 'TypeError' })
    expect(
      await broker.retryFailed({ queue, actor: 'a', errorType: 'TypeError', dryRun: true }),
    ).toEqual({ retried: 3, dryRun: true })
    expect(await broker.retryFailed({ queue, failedBefore: Date.now() - 7_200_000 })).toEqual({
      retried: 0,
      dryRun: false,
    })
    expect(await broker.retryFailed({ queue, actor: 'a', errorType: 'TypeError' })).toEqual({
      retried: 3,
      dryRun: false,
    })
    expect(await broker.retryFailed({ queue, errorType: 'RangeError' })).toEqual({
      retried: 4,
      dryRun: false,
    })
    expect(await states(db.sql, { queue })).toEqual({ queued: 7, rejected: 5 })
    expect(await states(db.sql, { queue: elsewhere })).toEqual({ rejected: 6 })
    expect(await states(db.sql, { schema: 'bulk_other' })).toEqual({ rejected: 7 })
    const [row] = await db.sql`select retries, failure, progress from iddqueue.messages
                                where queue = ${queue} and state = 'queued' limit 1`
    expect(row).toEqual({ retries: 0, failure: null, progress: null })
  })

  it('refuses bad filters with a typed error before any SQL', async () => {
    const broker = db.broker()
    await expect(broker.retryFailed({ queue: 'bad queue!' })).rejects.toThrow(
      InvalidIdentifierError,
    )
    await expect(broker.retryFailed({ failedBefore: new Date('nope') })).rejects.toThrow(
      /Invalid failedBefore/,
    )
    await expect(broker.retryFailed({ errorType: '' })).rejects.toThrow(InvalidOptionError)
    await expect(broker.retryFailed({ batchSize: 0 })).rejects.toThrow(/Invalid batchSize 0/)
    await expect(broker.retryFailed({ quue: 'x' } as never)).rejects.toThrow(
      /Unknown retryFailed option "quue"/,
    )
    await expect(broker.cancelMany({ state: 'done' as never })).rejects.toThrow(/Invalid state/)
    await expect(broker.deleteMessages({ state: 'queued' as never })).rejects.toThrow(
      /Invalid state/,
    )
    await expect(broker.deleteMessages({ state: [] })).rejects.toThrow(/Invalid state/)
    // Named exactly, even for values JSON.stringify throws on.
    await expect(broker.deleteMessages({ state: ['done', 1n] as never })).rejects.toThrow(
      "Invalid state [\"done\",1n]: expected 'done', 'rejected', 'cancelled' or a non-empty array of them",
    )
  })
})

describe("refusals inside a caller's transaction", () => {
  it('refuse out-of-range times and unstorable text before any SQL, leaving the transaction usable', async () => {
    const queue = uniqueQueue('bulk_tx')
    await seedRejected(queue, 'a', 3)
    // Each of these reached PostgreSQL, whose error aborted the caller's transaction.
    const bad: [string, (b: ReturnType<typeof createBroker>) => Promise<unknown>][] = [
      ['failedBefore', (b) => b.retryFailed({ queue, failedBefore: new Date(8.64e15) })],
      ['failedBefore', (b) => b.retryFailed({ queue, failedBefore: -8.64e15 })],
      [
        'failedBefore',
        (b) => b.retryFailed({ queue, failedBefore: new Date('0000-06-01T00:00:00Z') }),
      ],
      ['errorType', (b) => b.retryFailed({ queue, errorType: 'Type\u0000Error' })],
      ['finishedBefore', (b) => b.deleteMessages({ queue, finishedBefore: 8.64e15 })],
      ['staleAfterMs', (b) => b.recover({ staleAfterMs: Number.MAX_SAFE_INTEGER })],
    ]
    await db.sql.begin(async (tx) => {
      const inside = createBroker({ sql: tx })
      try {
        for (const [option, call] of bad) {
          const error = await call(inside).then(
            () => undefined,
            (caught: unknown) => caught,
          )
          expect(InvalidOptionError.isInstance(error), `${option}: ${String(error)}`).toBe(true)
          expect((error as InvalidOptionError).option).toBe(option)
        }
        // The transaction still works, and so do valid filters at the edges of the range.
        expect(
          await inside.retryFailed({
            queue,
            failedBefore: new Date('9999-12-31T23:59:59.999Z'),
            dryRun: true,
          }),
        ).toEqual({ retried: 3, dryRun: true })
        expect(
          await inside.deleteMessages({ queue, finishedBefore: new Date('0001-01-01T00:00:00Z') }),
        ).toEqual({ deleted: 0, dryRun: false })
      } finally {
        await inside.close()
      }
    })
    expect(await states(db.sql, { queue })).toEqual({ rejected: 3 })
  })
})

describe('cancelMany and deleteMessages', () => {
  it('respect their filters and never touch other queues or namespaces', async () => {
    const broker = db.broker()
    const other = db.broker({ namespace: { schema: 'bulk_ns', prefix: 'p_' } })
    await other.migrate()
    const queue = uniqueQueue('cancel')
    const elsewhere = uniqueQueue('elsewhere')
    const x = broker.actor('x', (_n: number) => {}, { queue })
    const y = broker.actor('y', (_n: number) => {}, { queue })
    const z = broker.actor('z', (_n: number) => {}, { queue: elsewhere })
    const xOther = other.actor('x', (_n: number) => {}, { queue })
    await broker.enqueueMany([
      ...Array.from({ length: 30 }, (_, i) => ({ message: x.message(i), delayMs: i * 1_000 })),
      ...Array.from({ length: 4 }, (_, i) => y.message(i)),
      ...Array.from({ length: 5 }, (_, i) => z.message(i)),
    ])
    await other.enqueueMany(Array.from({ length: 6 }, (_, i) => xOther.message(i)))
    expect(await broker.cancelMany({ queue, actor: 'x', dryRun: true })).toEqual({
      cancelled: 30,
      requested: 0,
      dryRun: true,
    })
    const progress: number[] = []
    expect(
      await broker.cancelMany({
        queue,
        actor: 'x',
        batchSize: 7,
        onProgress: ({ cancelled }) => progress.push(cancelled),
      }),
    ).toEqual({ cancelled: 30, requested: 0, dryRun: false })
    expect(progress).toEqual([7, 14, 21, 28, 30])
    expect(await states(db.sql, { queue })).toEqual({ cancelled: 30, queued: 4 })
    expect(await states(db.sql, { queue: elsewhere })).toEqual({ queued: 5 })
    expect(await states(db.sql, { schema: 'bulk_ns', prefix: 'p_' })).toEqual({ queued: 6 })

    // Terminal messages only: queued ones are never deleted.
    expect(await broker.deleteMessages({ queue, dryRun: true })).toEqual({
      deleted: 30,
      dryRun: true,
    })
    expect(await broker.deleteMessages({ queue, state: 'done' })).toEqual({
      deleted: 0,
      dryRun: false,
    })
    expect(
      await broker.deleteMessages({ queue, state: ['cancelled', 'rejected'], batchSize: 8 }),
    ).toEqual({ deleted: 30, dryRun: false })
    expect(await states(db.sql, { queue })).toEqual({ queued: 4 })
    expect(await states(db.sql, { schema: 'bulk_ns', prefix: 'p_' })).toEqual({ queued: 6 })
    expect(await other.cancelMany({ queue })).toEqual({
      cancelled: 6,
      requested: 0,
      dryRun: false,
    })
    expect(await other.deleteMessages({ finishedBefore: Date.now() - 60_000 })).toEqual({
      deleted: 0,
      dryRun: false,
    })
    expect(await other.deleteMessages()).toEqual({ deleted: 6, dryRun: false })
    expect(await states(db.sql, { queue })).toEqual({ queued: 4 })
    expect(await states(db.sql, { queue: elsewhere })).toEqual({ queued: 5 })
  })

  it('requests the cancellation of running messages: their signals abort', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('running')
    const started = new Set<number>()
    const aborted = new Set<number>()
    const job = broker.actor(
      'job',
      async (n: number, ctx: ActorContext) => {
        started.add(n)
        await new Promise<void>((resolve) => {
          ctx.signal.addEventListener('abort', () => resolve(), { once: true })
        })
        aborted.add(n)
        throw ctx.signal.reason
      },
      { queue },
    )
    await broker.enqueueMany([job.message(1), job.message(2), job.message(3)])
    const worker = broker.worker({ queues: [queue], concurrency: 2, prefetch: 0 })
    await worker.start()
    await until(() => started.size === 2, 10_000, 'two handlers to start')
    expect(await broker.cancelMany({ queue, state: 'consumed', dryRun: true })).toEqual({
      cancelled: 0,
      requested: 2,
      dryRun: true,
    })
    expect(await broker.cancelMany({ queue })).toEqual({
      cancelled: 1,
      requested: 2,
      dryRun: false,
    })
    await until(() => aborted.size === 2, 10_000, 'both signals to abort')
    await broker.join({ queues: [queue] })
    await worker.stop()
    expect(await states(db.sql, { queue })).toEqual({ cancelled: 3 })
    // Asking again changes nothing.
    expect(await broker.cancelMany({ queue })).toEqual({
      cancelled: 0,
      requested: 0,
      dryRun: false,
    })
  })
})
