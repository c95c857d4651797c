import { InvalidOptionError } from '@iddqueue/core'
import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  RESULTS_DEFAULTS,
  ResultCancelled,
  ResultFailure,
  ResultMissing,
  ResultTimeout,
  results,
} from '../src/index.js'
import { drain, resultRows, setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

describe('options', () => {
  it('refuses bad storeResults and resultTtlMs values when the actor is declared', () => {
    const broker = db.broker({ plugins: [results()] })
    const bad = [
      { storeResults: 'yes' },
      { storeResults: 1 },
      { storeResults: true, resultTtlMs: 0 },
      { storeResults: true, resultTtlMs: -5 },
      { storeResults: true, resultTtlMs: 1.5 },
      { storeResults: true, resultTtlMs: '60000' },
      // A TTL without storing would silently do nothing.
      { resultTtlMs: 60_000 },
    ]
    for (const options of bad) {
      expect(() => broker.actor('job', () => 1, options as never), JSON.stringify(options)).toThrow(
        InvalidOptionError,
      )
    }
    expect(() => broker.actor('job', () => 1, { storeResults: 'yes' } as never)).toThrow(
      'Invalid option storeResults for actor job: expected true or false, got "yes"',
    )
    // A refused actor is not declared: the name is still free.
    const job = broker.actor('job', () => 1, { storeResults: true, resultTtlMs: 60_000 })
    expect(job.options.storeResults).toBe(true)
  })

  it('leaves storeResults to core without the plugin: an unknown option', () => {
    const broker = db.broker()
    expect(() => broker.actor('job', () => 1, { storeResults: true })).toThrow(
      /Unknown option "storeResults" for actor job: .*a plugin may own it/,
    )
  })

  it('refuses unknown and bad plugin options', () => {
    for (const options of [
      { bogus: 1 },
      { storeResults: 'yes' },
      { resultTtlMs: 0 },
      { pollIntervalMs: -1 },
      { purgeIntervalMs: true },
      'fast',
    ]) {
      expect(() => results(options as never), JSON.stringify(options)).toThrow(InvalidOptionError)
    }
    // Past 2^31 - 1 ms a Node timer fires after 1 ms: a purge every millisecond.
    for (const [options, text] of [
      [
        { purgeIntervalMs: 2 ** 31 },
        'Invalid purgeIntervalMs 2147483648 of results(): expected an integer from 1 to 2147483647, or false',
      ],
      [
        { pollIntervalMs: 2 ** 40 },
        'Invalid pollIntervalMs 1099511627776 of results(): expected an integer from 1 to 2147483647',
      ],
    ] as const) {
      expect(() => results(options)).toThrow(
        expect.objectContaining({ name: 'InvalidOptionError', message: text }),
      )
    }
    expect(results({ purgeIntervalMs: 2 ** 31 - 1, pollIntervalMs: 2 ** 31 - 1 }).name).toBe(
      '@iddqueue/results',
    )
    expect(RESULTS_DEFAULTS.resultTtlMs).toBe(600_000)
    expect(RESULTS_DEFAULTS.storeResults).toBe(false)
  })

  it('applies the plugin defaults to actors that do not say', async () => {
    const broker = db.broker({
      plugins: [results({ storeResults: true, resultTtlMs: 120_000, purgeIntervalMs: false })],
    })
    const queue = uniqueQueue('defaults')
    const stored = broker.actor('stored', () => 'yes', { queue })
    const opted = broker.actor('opted', () => 'no', { queue, storeResults: false })
    const a = await stored.send()
    const b = await opted.send()
    await drain(broker, [queue])
    const rows = await resultRows(db.sql, [a.id, b.id])
    expect([...rows.keys()]).toEqual([a.id])
    const [ttl] = await db.sql`select extract(epoch from expires_at - stored_at)::int as s
      from iddqueue.results where message_id = ${a.id}`
    expect(ttl?.s).toBe(120)
    expect(await a.result({ block: false })).toBe('yes')
  })

  it('creates its table through broker.migrate(), recorded under @iddqueue/results', async () => {
    const schema = `results_${crypto.randomUUID().slice(0, 8)}`
    const broker = db.broker({ namespace: { schema, prefix: 'app_' }, plugins: [results()] })
    const { applied } = await broker.migrate()
    expect(applied.at(-1)).toEqual({
      owner: '@iddqueue/results',
      version: 1,
      name: 'create-results',
    })
    const [table] = await db.sql`select to_regclass(${`"${schema}".app_results`})::text as name`
    expect(table?.name).toBe(`${schema}.app_results`)
    expect((await broker.migrate()).applied).toEqual([])
  })

  it('names its errors so they are recognised across package copies', () => {
    const failure = { type: 'TypeError', message: 'x', at: '1970-01-01T00:00:00.000Z', attempt: 1 }
    const cancelled = new ResultCancelled('id', failure)
    expect(cancelled.name).toBe('ResultCancelled')
    expect(ResultFailure.isInstance(cancelled)).toBe(true)
    expect(ResultCancelled.isInstance(new ResultFailure('id', failure))).toBe(false)
    expect(ResultMissing.isInstance(new ResultTimeout('id', 1, 'late'))).toBe(false)
    expect(ResultTimeout.isInstance(new ResultTimeout('id', 1, 'late'))).toBe(true)
  })

  it('adds storeResults and resultTtlMs to core ActorOptions, typed (declaration merging)', async () => {
    const broker = db.broker({ plugins: [results()] })
    const add = broker.actor('add', (a: number, b: number) => a + b, {
      storeResults: true,
      resultTtlMs: 1_000,
      queue: uniqueQueue('types'),
    })
    // @ts-expect-error storeResults is a boolean
    expect(() => broker.actor('bad', () => 1, { storeResults: 'yes' })).toThrow(InvalidOptionError)
    const message = add.message(1, 2)
    expectTypeOf(message.result).returns.resolves.toEqualTypeOf<number>()
  })
})

describe('refusals name any value', () => {
  // String() throws on an object without a prototype and JSON.stringify on a
  // bigint: the refusal must still be InvalidOptionError, naming the value.
  const bare = Object.create(null)

  /** The error `run` throws or rejects with. */
  async function refusal(run: () => unknown): Promise<Error> {
    try {
      await run()
    } catch (error) {
      return error as Error
    }
    throw new Error('expected a refusal')
  }

  it.each([
    [{ storeResults: 1n }, 'Invalid storeResults 1n of results(): expected true or false'],
    [{ storeResults: bare }, 'Invalid storeResults an object of results(): expected true or false'],
    [{ resultTtlMs: 5n }, 'Invalid resultTtlMs 5n of results(): expected an integer of at least 1'],
    [
      { pollIntervalMs: bare },
      'Invalid pollIntervalMs an object of results(): expected an integer from 1 to 2147483647',
    ],
    [
      { purgeIntervalMs: Symbol('s') },
      'Invalid purgeIntervalMs a symbol of results(): expected an integer from 1 to 2147483647, or false',
    ],
  ])('results(%o)', async (options, text) => {
    const error = await refusal(() => results(options as never))
    expect(error).toBeInstanceOf(InvalidOptionError)
    expect(error.message).toBe(text)
  })

  it.each([
    [
      { storeResults: 0n },
      'Invalid option storeResults for actor job: expected true or false, got 0n',
    ],
    [
      { storeResults: true, resultTtlMs: bare },
      'Invalid option resultTtlMs for actor job: expected an integer of at least 1 (milliseconds), got an object',
    ],
  ])('actor options %o', async (options, text) => {
    const broker = db.broker({ plugins: [results()] })
    const error = await refusal(() => broker.actor('job', () => 1, options as never))
    expect(error).toBeInstanceOf(InvalidOptionError)
    expect(error.message).toBe(text)
  })

  it.each([
    [{ block: 1n }, 'Invalid block 1n: expected true or false'],
    [{ block: bare }, 'Invalid block an object: expected true or false'],
    [{ timeoutMs: 10n }, 'Invalid timeoutMs 10n: expected an integer of 0 or more (milliseconds)'],
    [
      { timeoutMs: bare },
      'Invalid timeoutMs an object: expected an integer of 0 or more (milliseconds)',
    ],
  ])('message.result(%o)', async (options, text) => {
    const broker = db.broker({ plugins: [results()] })
    const job = broker.actor('job', () => 1, { queue: uniqueQueue('any'), storeResults: true })
    const error = await refusal(() => job.message().result(options as never))
    expect(error).toBeInstanceOf(InvalidOptionError)
    expect(error.message).toBe(text)
  })

  it.each([
    [{ batchSize: 2n }, 'Invalid batchSize 2n: expected an integer of at least 1'],
    [{ batchSize: bare }, 'Invalid batchSize an object: expected an integer of at least 1'],
    // It read null.batchSize: a TypeError.
    [null, 'Invalid purgeResults() options null: expected an object'],
  ])('purgeResults(%o)', async (options, text) => {
    const plugin = results()
    db.broker({ plugins: [plugin] })
    const error = await refusal(() => plugin.purgeResults(options as never))
    expect(error).toBeInstanceOf(InvalidOptionError)
    expect(error.message).toBe(text)
  })
})
