import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { assertQueueName, createBroker, IddqueueError } from '../src/index.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

// Hostile input through the public surface: the outcome is always success
// or a typed IddqueueError (never a TypeError, a hang or a partial write).

/** Any value a caller might pass where a plain one is expected. */
const anything = fc.oneof(
  fc.anything({
    withBigInt: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withTypedArray: true,
    withSparseArray: true,
    withBoxedValues: true,
  }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    -0,
    2 ** 53,
    -1,
    0.5,
    '\u0000',
    '\ud800',
    () => {},
    Symbol('s'),
  ),
)

function typedOrSuccess(run: () => unknown): void {
  try {
    run()
  } catch (error) {
    expect(IddqueueError.isInstance(error), String(error)).toBe(true)
  }
}

async function typedOrSuccessAsync(run: () => Promise<unknown>): Promise<boolean> {
  try {
    await run()
    return true
  } catch (error) {
    expect(IddqueueError.isInstance(error), `${String(error)}\n${(error as Error)?.stack}`).toBe(
      true,
    )
    return false
  }
}

describe('validators, under random input', () => {
  it('assertQueueName accepts or throws InvalidIdentifierError', () => {
    fc.assert(
      fc.property(fc.oneof(anything, fc.stringMatching(/^[\w.:-]{0,130}$/)), (v) =>
        typedOrSuccess(() => assertQueueName(v)),
      ),
    )
  })

  it('createBroker and broker.worker validate every option without connecting', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            poolSize: anything,
            maxPayloadBytes: anything,
            sendTimeoutMs: anything,
            connectTimeoutMs: anything,
            namespace: fc.oneof(
              anything,
              fc.record({ schema: anything, prefix: anything }, { requiredKeys: [] }),
            ),
            currentMessage: anything,
            deleteOnSuccess: anything,
          },
          { requiredKeys: [] },
        ),
        fc.record(
          {
            concurrency: anything,
            prefetch: anything,
            pollIntervalMs: anything,
            queues: anything,
            staleAfterMs: anything,
            heartbeatIntervalMs: anything,
            settleBatchSize: anything,
          },
          { requiredKeys: [] },
        ),
        async (brokerOptions, workerOptions) => {
          let broker: ReturnType<typeof createBroker> | undefined
          typedOrSuccess(() => {
            broker = createBroker({
              url: 'postgres://nobody@127.0.0.1:1/none',
              ...brokerOptions,
            } as never)
          })
          if (!broker) return
          typedOrSuccess(() => broker!.worker(workerOptions as never))
          await broker.close()
        },
      ),
      { numRuns: 300 },
    )
  })

  it('actor declarations accept or refuse names and options with typed errors', async () => {
    const broker = createBroker({ url: 'postgres://nobody@127.0.0.1:1/none' })
    fc.assert(
      fc.property(
        anything,
        fc.record(
          {
            queue: anything,
            priority: anything,
            maxRetries: anything,
            timeLimitMs: anything,
            maxAgeMs: anything,
            minBackoffMs: anything,
            maxBackoffMs: anything,
          },
          { requiredKeys: [] },
        ),
        (name, options) => {
          typedOrSuccess(() => broker.actor(name as string, () => {}, options as never))
        },
      ),
      { numRuns: 500 },
    )
    await broker.close()
  })
})

describe('sends, under random arguments and options', () => {
  it('store exactly what was sent or refuse the whole batch before any SQL', async () => {
    const queue = uniqueQueue('prop')
    const broker = db.broker()
    const actor = broker.actor('prop', () => {}, { queue })
    let stored = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.array(fc.oneof(fc.jsonValue(), anything), { maxLength: 3 }),
            fc.record(
              { delayMs: anything, priority: anything, dedupKey: anything },
              { requiredKeys: [] },
            ),
          ),
          { minLength: 1, maxLength: 4 },
        ),
        async (entries) => {
          const ok = await typedOrSuccessAsync(async () => {
            const messages = entries.map(([args, options]) =>
              actor.messageWithOptions({
                args: args as never,
                priority: options.priority as never,
              }),
            )
            await broker.enqueueMany(messages)
            stored += messages.length
          })
          const [row] =
            await db.sql`select count(*)::int as n from iddqueue.messages where queue = ${queue}`
          // All of the batch or none of it.
          expect(
            row?.n,
            ok ? 'the batch was stored' : 'nothing of a refused batch was stored',
          ).toBe(stored)
        },
      ),
      { numRuns: 150 },
    )
    // One send with random options at a time, too.
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue(),
        fc.record(
          {
            delayMs: anything,
            eta: anything,
            priority: anything,
            dedupKey: anything,
            dedupTtlMs: anything,
            options: anything,
          },
          { requiredKeys: [] },
        ),
        async (arg, options) => {
          const ok = await typedOrSuccessAsync(() =>
            actor.sendWithOptions({ args: [arg] as never, ...(options as object) }),
          )
          if (ok) stored++
          const [row] =
            await db.sql`select count(*)::int as n from iddqueue.messages where queue = ${queue}`
          expect(row?.n).toBeLessThanOrEqual(stored)
        },
      ),
      { numRuns: 150 },
    )
  }, 120_000)

  it('JSON edge cases round-trip exactly through the database, or are refused with InvalidPayloadError', async () => {
    const queue = uniqueQueue('json')
    const broker = db.broker()
    const actor = broker.actor('json', () => {}, { queue })
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue({ maxDepth: 4 }),
        fc.string({ unit: 'binary' }),
        async (value, text) => {
          const args = [value, text]
          let sent: { id: string } | undefined
          const ok = await typedOrSuccessAsync(async () => {
            sent = await actor.sendWithOptions({ args: args as never })
          })
          if (!ok) return
          const [row] = await db.sql`select args from iddqueue.messages where id = ${sent!.id}`
          expect(row?.args).toEqual(JSON.parse(JSON.stringify(args)))
        },
      ),
      { numRuns: 200 },
    )
  }, 120_000)
})
