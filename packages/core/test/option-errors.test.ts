import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  type ActorOptions,
  type Broker,
  createBroker,
  InvalidOptionError,
  type WorkerOptions,
} from '../src/index.js'

// Database-free: every refusal below must come from the one place that
// checks options (src/options/check-option.ts), carry the refused option,
// the value given and what was expected as fields, and happen before any
// SQL. The broker runs on a Kysely instance whose driver records every
// connection and statement it is asked for and answers none: a check that
// ran after the SQL would leave a statement behind (and fail another way).

/** Everything the recording driver was asked to do. */
const reached: string[] = []

class RecordingDriver implements Driver {
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    reached.push('connect')
    return {
      executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        reached.push(query.sql)
        return Promise.reject(new Error(`reached SQL: ${query.sql}`))
      },
      streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
        reached.push(query.sql)
        throw new Error(`reached SQL: ${query.sql}`)
      },
    }
  }
  async beginTransaction(): Promise<void> {
    reached.push('begin')
  }
  async commitTransaction(): Promise<void> {
    reached.push('commit')
  }
  async rollbackTransaction(): Promise<void> {
    reached.push('rollback')
  }
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

function recordingKysely(): Kysely<unknown> {
  return new Kysely<unknown>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new RecordingDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  })
}

/** No PostgreSQL listens there; used only where a pool of a known size matters. */
const UNREACHABLE = 'postgres://nobody@127.0.0.1:1/none'
const ID = '0193a5f0-0000-7000-8000-000000000000'
const ACTOR_KEYS =
  'one of queue, priority, maxRetries, minBackoffMs, maxBackoffMs, retryWhen, throws, onRetryExhausted, timeLimitMs, maxAgeMs, onSuccess, onFailure, notifyShutdown, transactional'
const RETRY_KEYS = 'one of queue, actor, failedBefore, errorType, dryRun, batchSize, onProgress'
/** Passes `instanceof Date` but holds no time. */
const NOT_A_DATE = Object.create(Date.prototype) as Date
const TIME =
  'a valid Date or epoch milliseconds from 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z'
const ERROR_TYPE =
  'a non-empty string of at most 200 characters, without \\u0000 or unpaired surrogates'
/** Year 0 (1 BC) and year 10000: JavaScript holds them, PostgreSQL's ISO input does not. */
const YEAR_0 = new Date('0000-12-31T23:59:59.999Z')
const YEAR_10000 = Date.parse('+010000-01-01T00:00:00.000Z')
/** Passes `instanceof Date`, yet Date's own getTime throws on it. */
const FAKE_DATE = Object.create(Date.prototype) as Date

interface Fields {
  readonly option: string
  readonly value: unknown
  readonly expected: string
}

/** Runs `run` (sync or async), expects an InvalidOptionError and returns its three fields. */
async function refusal(run: () => unknown): Promise<Fields> {
  let error: unknown
  try {
    await run()
  } catch (caught) {
    error = caught
  }
  expect(InvalidOptionError.isInstance(error), String(error)).toBe(true)
  const { option, value, expected } = error as InvalidOptionError
  return { option: option as string, value, expected: expected as string }
}

let broker: Broker
let kysely: Kysely<unknown>
beforeEach(() => {
  reached.length = 0
  kysely = recordingKysely()
  broker = createBroker({ db: kysely })
})
afterEach(async () => {
  // Checked before close(), which must not need SQL either.
  expect(reached, 'nothing reached SQL').toEqual([])
  await broker.close()
  await kysely.destroy()
})

describe('broker options', () => {
  const db = () => kysely
  it.each<[string, () => unknown, Fields]>([
    [
      'maxPayloadBytes',
      () => createBroker({ db: db(), maxPayloadBytes: 1023 }),
      { option: 'maxPayloadBytes', value: 1023, expected: 'an integer of at least 1024' },
    ],
    [
      'poolSize',
      () => createBroker({ db: db(), poolSize: 1 }),
      { option: 'poolSize', value: 1, expected: 'an integer of at least 2' },
    ],
    [
      'connectTimeoutMs',
      () => createBroker({ db: db(), connectTimeoutMs: 99.5 }),
      { option: 'connectTimeoutMs', value: 99.5, expected: 'an integer of at least 100' },
    ],
    [
      'sendTimeoutMs',
      () => createBroker({ db: db(), sendTimeoutMs: 0 }),
      { option: 'sendTimeoutMs', value: 0, expected: 'a positive integer (ms) or false' },
    ],
    [
      'currentMessage',
      () => createBroker({ db: db(), currentMessage: 'yes' as never }),
      { option: 'currentMessage', value: 'yes', expected: 'true or false' },
    ],
    [
      'deleteOnSuccess',
      () => createBroker({ db: db(), deleteOnSuccess: 1 as never }),
      { option: 'deleteOnSuccess', value: 1, expected: 'true or false' },
    ],
    [
      'a plugin without a name',
      () => createBroker({ db: db(), plugins: [{} as never] }),
      { option: 'plugins', value: {}, expected: 'an object with a name' },
    ],
    [
      'a plugin listed twice',
      () => createBroker({ db: db(), plugins: [{ name: 'p' }, { name: 'p' }] }),
      { option: 'plugins', value: 'p', expected: 'plugins with distinct names' },
    ],
    [
      'sql',
      () => createBroker({ sql: {} as never }),
      {
        option: 'sql',
        value: {},
        expected: 'a postgres.js instance (the result of postgres(url))',
      },
    ],
    [
      'db',
      () => createBroker({ db: 'kysely' }),
      { option: 'db', value: 'kysely', expected: 'a Kysely instance' },
    ],
    [
      // The URL may hold a password: the value is withheld, as in the text.
      'url',
      () => createBroker({ url: 'mysql://user:secret@localhost/app' }),
      {
        option: 'url',
        value: undefined,
        expected: 'a postgres:// or postgresql:// connection string',
      },
    ],
    [
      'url given but undefined',
      () => createBroker({ url: undefined }),
      {
        option: 'url',
        value: undefined,
        expected: 'a postgres:// or postgresql:// connection string',
      },
    ],
    [
      'the options themselves',
      () => createBroker(null as never),
      { option: 'options', value: null, expected: 'an object' },
    ],
  ])('%s', async (_name, run, fields) => {
    expect(await refusal(run)).toStrictEqual(fields)
  })
})

describe('worker options', () => {
  it.each<[string, WorkerOptions, Fields]>([
    [
      'concurrency',
      { concurrency: 0 },
      { option: 'concurrency', value: 0, expected: 'an integer of at least 1' },
    ],
    [
      'prefetch',
      { prefetch: -1 },
      { option: 'prefetch', value: -1, expected: 'an integer of at least 0' },
    ],
    [
      'pollIntervalMs',
      { pollIntervalMs: 9 },
      { option: 'pollIntervalMs', value: 9, expected: 'an integer from 10 to 2147483647' },
    ],
    [
      'shutdownTimeoutMs',
      { shutdownTimeoutMs: -1 },
      { option: 'shutdownTimeoutMs', value: -1, expected: 'an integer from 0 to 2147483647' },
    ],
    [
      'purgeIntervalMs',
      { purgeIntervalMs: 1.5 },
      { option: 'purgeIntervalMs', value: 1.5, expected: 'an integer from 10 to 2147483647' },
    ],
    [
      'retentionMs',
      { retentionMs: 0 },
      { option: 'retentionMs', value: 0, expected: 'an integer from 1 to 3155760000000' },
    ],
    [
      'queryTimeoutMs',
      { queryTimeoutMs: 99 },
      { option: 'queryTimeoutMs', value: 99, expected: 'an integer from 100 to 2147483647' },
    ],
    [
      // Past 2^31 - 1 ms a Node timer fires at once: the deadline would expire every statement.
      'queryTimeoutMs beyond a timer',
      { queryTimeoutMs: 2 ** 31 },
      { option: 'queryTimeoutMs', value: 2 ** 31, expected: 'an integer from 100 to 2147483647' },
    ],
    [
      'queues',
      { queues: [] },
      { option: 'queues', value: [], expected: 'a non-empty array of queue names' },
    ],
    [
      'staleAfterMs below twice heartbeatIntervalMs',
      { staleAfterMs: 100, heartbeatIntervalMs: 100 },
      {
        option: 'staleAfterMs',
        value: 100,
        expected: 'an integer of at least 200 (twice heartbeatIntervalMs)',
      },
    ],
  ])('%s', async (_name, options, fields) => {
    expect(await refusal(() => broker.worker(options))).toStrictEqual(fields)
  })

  it('transactionalConcurrency above what the pool allows', async () => {
    const pooled = createBroker({ url: UNREACHABLE, poolSize: 10 })
    try {
      pooled.actor('tx', () => {}, { transactional: true })
      expect(await refusal(() => pooled.worker({ transactionalConcurrency: 9 }))).toStrictEqual({
        option: 'transactionalConcurrency',
        value: 9,
        expected: "an integer of at most 8 (this pool's capacity)",
      })
    } finally {
      await pooled.close()
    }
  })
})

describe('actor options', () => {
  it.each<[string, Record<string, unknown>, Fields]>([
    ['an unknown key', { retries: 3 }, { option: 'retries', value: 3, expected: ACTOR_KEYS }],
    [
      'priority',
      { priority: 2 ** 31 },
      { option: 'priority', value: 2 ** 31, expected: 'an integer from -2147483647 to 2147483647' },
    ],
    [
      'maxRetries',
      { maxRetries: -1 },
      { option: 'maxRetries', value: -1, expected: 'an integer from 0 to 1000000' },
    ],
    [
      'timeLimitMs',
      { timeLimitMs: 0 },
      { option: 'timeLimitMs', value: 0, expected: 'an integer of at least 1' },
    ],
    [
      'retryWhen',
      { retryWhen: 3 },
      { option: 'retryWhen', value: 3, expected: 'a function (retries, error) => boolean' },
    ],
    [
      'throws',
      { throws: ['TypeError'] },
      { option: 'throws', value: ['TypeError'], expected: 'an array of error classes' },
    ],
    [
      'notifyShutdown',
      { notifyShutdown: 'yes' },
      { option: 'notifyShutdown', value: 'yes', expected: 'a boolean' },
    ],
    [
      'transactional',
      { transactional: 'yes' },
      { option: 'transactional', value: 'yes', expected: 'a boolean' },
    ],
    [
      'onSuccess',
      { onSuccess: 42 },
      { option: 'onSuccess', value: 42, expected: 'an actor or an actor name' },
    ],
    [
      'minBackoffMs above maxBackoffMs',
      { minBackoffMs: 10_000, maxBackoffMs: 1_000 },
      {
        option: 'minBackoffMs',
        value: 10_000,
        expected: 'an integer of at most maxBackoffMs (1000)',
      },
    ],
  ])('%s', async (_name, options, fields) => {
    expect(
      await refusal(() => broker.actor('bad', () => 1, options as ActorOptions)),
    ).toStrictEqual(fields)
  })

  it('the handler and the options object', async () => {
    expect(await refusal(() => broker.actor('bad', 5 as never))).toStrictEqual({
      option: 'handler',
      value: 5,
      expected: 'a function',
    })
    expect(await refusal(() => broker.actor('bad', () => 1, null as never))).toStrictEqual({
      option: 'options',
      value: null,
      expected: 'an object',
    })
  })
})

describe('operations options', () => {
  it.each<[string, (b: Broker) => unknown, Fields]>([
    [
      'retryFailed batchSize',
      (b) => b.retryFailed({ batchSize: 0 }),
      { option: 'batchSize', value: 0, expected: 'an integer from 1 to 10000' },
    ],
    [
      'retryFailed unknown key',
      (b) => b.retryFailed({ quue: 'x' } as never),
      { option: 'quue', value: 'x', expected: RETRY_KEYS },
    ],
    [
      'retryFailed dryRun',
      (b) => b.retryFailed({ dryRun: 'yes' as never }),
      { option: 'dryRun', value: 'yes', expected: 'true or false' },
    ],
    [
      'retryFailed onProgress',
      (b) => b.retryFailed({ onProgress: 5 as never }),
      { option: 'onProgress', value: 5, expected: 'a function' },
    ],
    [
      'retryFailed failedBefore',
      (b) => b.retryFailed({ failedBefore: Number.NaN }),
      { option: 'failedBefore', value: Number.NaN, expected: TIME },
    ],
    [
      // The earliest Date: PostgreSQL refused its ISO text ('-271821-04-20T...') in the statement.
      'retryFailed failedBefore before year 1',
      (b) => b.retryFailed({ failedBefore: new Date(-8.64e15) }),
      { option: 'failedBefore', value: new Date(-8.64e15), expected: TIME },
    ],
    [
      'retryFailed failedBefore in year 0',
      (b) => b.retryFailed({ failedBefore: YEAR_0 }),
      { option: 'failedBefore', value: YEAR_0, expected: TIME },
    ],
    [
      'retryFailed failedBefore in year 10000 (epoch ms)',
      (b) => b.retryFailed({ failedBefore: YEAR_10000 }),
      { option: 'failedBefore', value: YEAR_10000, expected: TIME },
    ],
    [
      'retryFailed failedBefore at the latest Date',
      (b) => b.retryFailed({ failedBefore: new Date(8.64e15) }),
      { option: 'failedBefore', value: new Date(8.64e15), expected: TIME },
    ],
    [
      // Date.prototype.getTime throws on it: the refusal itself threw a TypeError.
      'retryFailed failedBefore an object that only inherits from Date',
      (b) => b.retryFailed({ failedBefore: NOT_A_DATE }),
      { option: 'failedBefore', value: NOT_A_DATE, expected: TIME },
    ],
    [
      'retryFailed errorType empty',
      (b) => b.retryFailed({ errorType: '' }),
      { option: 'errorType', value: '', expected: ERROR_TYPE },
    ],
    [
      // PostgreSQL refuses \u0000 in text: the statement failed, aborting a caller's transaction.
      'retryFailed errorType with \\u0000',
      (b) => b.retryFailed({ errorType: 'Type\u0000Error' }),
      { option: 'errorType', value: 'Type\u0000Error', expected: ERROR_TYPE },
    ],
    [
      // Sent as UTF-8 it became U+FFFD and matched other types.
      'retryFailed errorType with an unpaired surrogate',
      (b) => b.retryFailed({ errorType: 'Type\ud800Error' }),
      { option: 'errorType', value: 'Type\ud800Error', expected: ERROR_TYPE },
    ],
    [
      'retryFailed errorType too long',
      (b) => b.retryFailed({ errorType: 'E'.repeat(201) }),
      { option: 'errorType', value: 'E'.repeat(201), expected: ERROR_TYPE },
    ],
    [
      'deleteMessages finishedBefore at the latest Date',
      (b) => b.deleteMessages({ finishedBefore: new Date(8.64e15) }),
      { option: 'finishedBefore', value: new Date(8.64e15), expected: TIME },
    ],
    [
      'deleteMessages finishedBefore before year 1 (epoch ms)',
      (b) => b.deleteMessages({ finishedBefore: -8.64e15 }),
      { option: 'finishedBefore', value: -8.64e15, expected: TIME },
    ],
    [
      'deleteMessages finishedBefore in year 0',
      (b) => b.deleteMessages({ finishedBefore: YEAR_0 }),
      { option: 'finishedBefore', value: YEAR_0, expected: TIME },
    ],
    [
      'deleteMessages finishedBefore not a time',
      (b) => b.deleteMessages({ finishedBefore: '2030-01-01' as never }),
      { option: 'finishedBefore', value: '2030-01-01', expected: TIME },
    ],
    [
      'retryFailed id',
      (b) => b.retryFailed('nope'),
      { option: 'message id', value: 'nope', expected: 'a UUID' },
    ],
    [
      'cancelMany filter',
      (b) => b.cancelMany(5 as never),
      { option: 'filter', value: 5, expected: 'an object' },
    ],
    [
      'cancelMany state',
      (b) => b.cancelMany({ state: 'done' as never }),
      { option: 'state', value: 'done', expected: "'queued' or 'consumed'" },
    ],
    [
      'deleteMessages state',
      (b) => b.deleteMessages({ state: [] }),
      {
        option: 'state',
        value: [],
        expected: "'done', 'rejected', 'cancelled' or a non-empty array of them",
      },
    ],
    [
      'getMessage id',
      (b) => b.getMessage('42'),
      { option: 'message id', value: '42', expected: 'a UUID' },
    ],
    [
      'getMessage payload',
      (b) => b.getMessage(ID, { payload: 'yes' as never }),
      { option: 'payload', value: 'yes', expected: 'true or false' },
    ],
    [
      'getMessage options',
      (b) => b.getMessage(ID, null as never),
      { option: 'options', value: null, expected: 'an object' },
    ],
    [
      'reschedule with nothing to change',
      (b) => b.reschedule(ID, {}),
      { option: 'options', value: {}, expected: 'eta, delayMs or priority' },
    ],
    [
      'reschedule unknown key',
      (b) => b.reschedule(ID, { when: 1 } as never),
      { option: 'when', value: 1, expected: 'one of eta, delayMs, priority' },
    ],
    [
      'reschedule eta that only inherits from Date',
      (b) => b.reschedule(ID, { eta: FAKE_DATE }),
      { option: 'eta', value: FAKE_DATE, expected: 'a valid Date or epoch milliseconds' },
    ],
    [
      'reschedule options',
      (b) => b.reschedule(ID, null as never),
      { option: 'options', value: null, expected: 'an object' },
    ],
    [
      'reschedule priority',
      (b) => b.reschedule(ID, { priority: 1.5 }),
      { option: 'priority', value: 1.5, expected: 'an integer from -2147483647 to 2147483647' },
    ],
    [
      'reschedule delayMs',
      (b) => b.reschedule(ID, { delayMs: -1 }),
      { option: 'delayMs', value: -1, expected: 'a finite number of milliseconds, 0 or more' },
    ],
    ['runNow id', (b) => b.runNow('42'), { option: 'message id', value: '42', expected: 'a UUID' }],
    [
      'listFailed after',
      (b) => b.listFailed({ after: 'x' }),
      { option: 'after', value: 'x', expected: 'a UUID' },
    ],
    [
      'listFailed limit',
      (b) => b.listFailed({ limit: 1001 }),
      { option: 'limit', value: 1001, expected: 'an integer from 1 to 1000' },
    ],
    [
      'showFailed id',
      (b) => b.showFailed('x'),
      { option: 'message id', value: 'x', expected: 'a UUID' },
    ],
    [
      // A payload flag that is not a boolean was read as false.
      'showFailed payload',
      (b) => b.showFailed(ID, { payload: 'yes' as never }),
      { option: 'payload', value: 'yes', expected: 'true or false' },
    ],
    [
      'showFailed options',
      (b) => b.showFailed(ID, 5 as never),
      { option: 'options', value: 5, expected: 'an object' },
    ],
    [
      'purge olderThanMs',
      (b) => b.purge({ olderThanMs: -1 }),
      { option: 'olderThanMs', value: -1, expected: 'an integer from 0 to 3155760000000' },
    ],
    [
      // now() - 3e14 ms is before 4713 BC: PostgreSQL would fail with "timestamp out of range".
      'purge olderThanMs past what a timestamp holds',
      (b) => b.purge({ olderThanMs: 3e14 }),
      { option: 'olderThanMs', value: 3e14, expected: 'an integer from 0 to 3155760000000' },
    ],
    [
      // Refused before the first batch is deleted, not after it.
      'purge onProgress',
      (b) => b.purge({ onProgress: 5 as never }),
      { option: 'onProgress', value: 5, expected: 'a function' },
    ],
    [
      'purge options',
      (b) => b.purge(null as never),
      { option: 'options', value: null, expected: 'an object' },
    ],
    [
      // NaN waited for ever with pending messages.
      'join timeoutMs',
      (b) => b.join({ queues: ['q'], timeoutMs: Number.NaN }),
      { option: 'timeoutMs', value: Number.NaN, expected: 'an integer from 0 to 2147483647' },
    ],
    [
      'join intervalMs',
      (b) => b.join({ queues: ['q'], intervalMs: 0 }),
      { option: 'intervalMs', value: 0, expected: 'an integer from 1 to 2147483647' },
    ],
    [
      // A string reached SQL as a malformed array.
      'join queues',
      (b) => b.join({ queues: 'q' as never }),
      { option: 'queues', value: 'q', expected: 'an array of queue names' },
    ],
    [
      'purge batchSize',
      (b) => b.purge({ batchSize: -1 }),
      { option: 'batchSize', value: -1, expected: 'an integer of at least 1' },
    ],
    [
      'recover staleAfterMs',
      (b) => b.recover({ staleAfterMs: 1.5 }),
      { option: 'staleAfterMs', value: 1.5, expected: 'an integer from 0 to 3155760000000' },
    ],
    [
      // now() - 2^53 ms is before 4713 BC: PostgreSQL failed with "timestamp out of range".
      'recover staleAfterMs past what a timestamp holds',
      (b) => b.recover({ staleAfterMs: Number.MAX_SAFE_INTEGER }),
      {
        option: 'staleAfterMs',
        value: Number.MAX_SAFE_INTEGER,
        expected: 'an integer from 0 to 3155760000000',
      },
    ],
    [
      // A null options bag threw a TypeError from reading its fields.
      'recover options',
      (b) => b.recover(null as never),
      { option: 'options', value: null, expected: 'an object' },
    ],
    [
      'flush options',
      (b) => b.flush(null as never),
      { option: 'options', value: null, expected: 'an object' },
    ],
    [
      // The pause was stored first; a bad timeout was then ignored or fired at once.
      'pause timeoutMs',
      (b) => b.pause('q', { timeoutMs: Number.NaN }),
      { option: 'timeoutMs', value: Number.NaN, expected: 'an integer from 0 to 2147483647' },
    ],
    [
      'pause options',
      (b) => b.pause('q', null as never),
      { option: 'options', value: null, expected: 'an object' },
    ],
    [
      // The cancellation was stored first; a bad timeout was then ignored.
      'cancel timeoutMs',
      (b) => b.cancel(ID, { timeoutMs: -1 }),
      { option: 'timeoutMs', value: -1, expected: 'an integer from 0 to 2147483647' },
    ],
    [
      'cancel options',
      (b) => b.cancel(ID, 'fast' as never),
      { option: 'options', value: 'fast', expected: 'an object' },
    ],
  ])('%s', async (_name, run, fields) => {
    expect(await refusal(() => run(broker))).toStrictEqual(fields)
  })

  it('name any value without running its code or printing it whole', async () => {
    const text = async (run: () => unknown): Promise<string> => {
      try {
        await run()
      } catch (error) {
        expect(InvalidOptionError.isInstance(error), String(error)).toBe(true)
        return (error as Error).message
      }
      throw new Error('not refused')
    }
    // String() showed an array's items as if they were the value...
    expect(await text(() => broker.retryFailed({ batchSize: [5] as never }))).toBe(
      'Invalid batchSize an array: expected an integer from 1 to 10000',
    )
    // ...a function's source...
    expect(await text(() => broker.listFailed({ limit: (() => 'secret') as never }))).toBe(
      'Invalid limit a function: expected an integer from 1 to 1000',
    )
    // ...and a long string whole.
    expect(await text(() => broker.listFailed({ after: 'x'.repeat(300) }))).toBe(
      `Invalid after "${'x'.repeat(256)}…" (cursor): expected a UUID`,
    )
    expect(await text(() => broker.retryFailed({ batchSize: NOT_A_DATE as never }))).toBe(
      'Invalid batchSize an object: expected an integer from 1 to 10000',
    )
  })
})

describe('sending options', () => {
  it('message, enqueue, enqueueMany and pipeline', async () => {
    const add = broker.actor('add', (a: number, b: number) => a + b)
    expect(await refusal(() => broker.message('add', [1, 2], { id: 'x' }))).toStrictEqual({
      option: 'id',
      value: 'x',
      expected: 'a UUID',
    })
    expect(await refusal(() => broker.enqueue('x' as never))).toStrictEqual({
      option: 'message',
      value: 'x',
      expected: 'a Message from actor.message() or broker.message()',
    })
    expect(await refusal(() => broker.enqueueMany('x' as never))).toStrictEqual({
      option: 'entries',
      value: 'x',
      expected: 'an array of messages',
    })
    expect(await refusal(() => broker.enqueueMany([add.message(1, 2), 5 as never]))).toStrictEqual({
      option: 'entries[1]',
      value: 5,
      expected: 'a Message or { message, ...options }',
    })
    const many = Array.from({ length: 1001 }, () => add.message(1, 2))
    expect(await refusal(() => broker.enqueueMany(many))).toStrictEqual({
      option: 'entries',
      value: many,
      expected: 'at most 1000 messages',
    })
    expect(await refusal(() => broker.pipeline([]))).toStrictEqual({
      option: 'messages',
      value: [],
      expected: '1 to 1000 messages',
    })
    expect(await refusal(() => add.sendWithOptions({ args: [1, 2], delayMs: -1 }))).toStrictEqual({
      option: 'delayMs',
      value: -1,
      expected: 'a finite number of milliseconds, 0 or more',
    })
    expect(
      await refusal(() => add.sendWithOptions({ args: [1, 2], dedupKey: '', dedupTtlMs: 1_000 })),
    ).toStrictEqual({
      option: 'dedupKey',
      value: '',
      expected:
        'a non-empty string of at most 512 characters, without \\u0000 or unpaired surrogates',
    })
  })
})
