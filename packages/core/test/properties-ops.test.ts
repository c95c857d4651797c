import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type Broker,
  createBroker,
  IddqueueError,
  InvalidIdentifierError,
  InvalidOptionError,
} from '../src/index.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

// Hostile input to the operations API and the worker options the first
// properties file leaves out. Each bad value must be refused with a typed
// error naming the option, before any SQL: the call is made on a broker
// whose URL nothing answers (a BrokerConnectionError there would mean the
// value reached the database) and on the test database, whose messages
// table must be exactly as it was. Assertions name the error class and the
// option, never a whole message text, which may change.

/** No PostgreSQL listens there: only a check that runs before connecting can answer. */
const UNREACHABLE = 'postgres://nobody@127.0.0.1:1/none'

type ErrorClass = typeof InvalidOptionError | typeof InvalidIdentifierError

/** Strings built to break quoting, logs or lengths. */
const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    "'; drop table iddqueue.messages; --",
    'a"b',
    '\u0000',
    'x\u0000y',
    '\ud800',
    'q'.repeat(10_000),
    ' ',
    '\n',
    'é',
    '$1',
  ),
)

/** Numbers no integer option accepts: NaN, infinities, fractions, past 2^53. */
const badNumber = fc.oneof(
  fc.constantFrom(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    0.5,
    -0.5,
    1e300,
    -1e300,
    2 ** 53,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
  ),
  fc.double().filter((x) => !Number.isInteger(x)),
)

/**
 * Values of the wrong type, including objects without a prototype and with
 * an own `toString` that is not a function, on which `String()` throws:
 * refusals render values with describeValue, which never calls them.
 */
const wrongType = fc.oneof(
  hostileString,
  fc.boolean(),
  fc.constant(null),
  fc.bigInt(),
  fc.constantFrom(
    Symbol('s'),
    () => 1,
    new Date(0),
    new Date(Number.NaN),
    [],
    [1],
    {},
    Object.create(null),
    { toString: 1, valueOf: 1 },
  ),
  fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), fc.jsonValue(), { maxKeys: 3 }),
  fc.array(fc.integer(), { maxLength: 3 }),
)

/** The first and last instants a time filter takes: years 1 and 9999, UTC. */
const MIN_TIME_MS = -62_135_596_800_000
const MAX_TIME_MS = 253_402_300_799_999

/**
 * Anything but a time from year 1 to 9999: no time at all, or a valid Date
 * or epoch ms before or after (year 0, year 10000, the first and last Date),
 * whose ISO text PostgreSQL refuses inside the statement.
 */
const badTime = fc.oneof(
  fc.constantFrom(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -Number.MAX_VALUE,
    8.64e15 + 1,
    1e17,
    new Date(Number.NaN),
    new Date(-8.64e15),
    new Date(8.64e15),
    new Date('0000-12-31T23:59:59.999Z'),
    new Date('+010000-01-01T00:00:00.000Z'),
    MIN_TIME_MS - 1,
    MAX_TIME_MS + 1,
    // Passes `instanceof Date`, but Date.prototype.getTime throws on it.
    Object.create(Date.prototype),
  ),
  safeInt(-8.64e15, MIN_TIME_MS - 1),
  safeInt(MAX_TIME_MS + 1, 8.64e15),
  fc.date({ min: new Date(-8.64e15), max: new Date(MIN_TIME_MS - 1), noInvalidDate: true }),
  fc.date({ min: new Date(MAX_TIME_MS + 1), max: new Date(8.64e15), noInvalidDate: true }),
  wrongType.filter((v) => !(v instanceof Date)),
)

/** A time from year 1 to 9999, as epoch ms or a Date. */
const goodTime = fc.oneof(
  fc.constantFrom(MIN_TIME_MS, MAX_TIME_MS, new Date(MIN_TIME_MS), new Date(MAX_TIME_MS)),
  safeInt(MIN_TIME_MS, MAX_TIME_MS),
  fc.date({ min: new Date(MIN_TIME_MS), max: new Date(MAX_TIME_MS), noInvalidDate: true }),
)

/** Integers from `min` to `max`, past fc.integer's 32-bit range. */
function safeInt(min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER) {
  return fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number)
}

/** Anything but an integer from `min` to `max` (and not undefined, which means the default). */
function notIntegerIn(min: number, max = Number.MAX_SAFE_INTEGER) {
  return fc.oneof(
    badNumber,
    wrongType,
    safeInt(Number.MIN_SAFE_INTEGER, min - 1),
    ...(max < Number.MAX_SAFE_INTEGER ? [safeInt(max + 1)] : []),
  )
}

/** Strings that are not valid queue or actor names. */
const badName = fc
  .oneof(
    hostileString,
    fc.constantFrom('', '-lead', '.lead', 'a b', 'a/b', 'x'.repeat(129), 'é'),
    wrongType.filter((v) => typeof v !== 'string'),
  )
  .filter((v) => typeof v !== 'string' || !/^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$/.test(v))

const validName = fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,40}$/)

/**
 * Asserts that `run` is refused with `errorClass`, its message naming every
 * one of `mentions` and, when given, its `option` field equal to `option`.
 */
async function refused(
  run: () => unknown,
  errorClass: ErrorClass,
  mentions: readonly string[],
  option?: string,
): Promise<void> {
  let error: unknown
  try {
    await run()
  } catch (caught) {
    error = caught
  }
  expect(error, 'the call was refused').toBeDefined()
  expect(errorClass.isInstance(error), `${String(error)}\n${(error as Error)?.stack}`).toBe(true)
  for (const mention of mentions) expect((error as Error).message).toContain(mention)
  if (option !== undefined) expect((error as InvalidOptionError).option).toBe(option)
}

/** Every row of the test database's messages table, as text: equal means untouched. */
async function snapshot(): Promise<string> {
  const [row] = await db.sql`select count(*)::int as n,
      coalesce(md5(string_agg(m::text, ',' order by m.id)), '') as digest
    from iddqueue.messages m`
  return `${row?.n}:${row?.digest}`
}

let offline: Broker
beforeAll(() => {
  offline = createBroker({ url: UNREACHABLE })
})
afterAll(() => offline.close())

/**
 * Refused on the unreachable broker (so before connecting) and on the test
 * database's broker, which must leave the messages table as it was.
 */
async function refusedBeforeSql(
  call: (broker: Broker) => unknown,
  errorClass: ErrorClass,
  mentions: readonly string[],
  broker: Broker,
  option?: string,
): Promise<void> {
  await refused(() => call(offline), errorClass, mentions, option)
  const before = await snapshot()
  await refused(() => call(broker), errorClass, mentions, option)
  expect(await snapshot(), 'a refused call changed nothing').toBe(before)
}

/** Messages in every state the operations look at, in a queue of their own. */
async function seed(broker: Broker): Promise<{ queue: string; queued: string[] }> {
  const queue = uniqueQueue('ops')
  const actor = broker.actor('ops_prop', () => {}, { queue })
  const ids: string[] = []
  for (let i = 0; i < 8; i++) ids.push((await actor.send()).id)
  const [done, rejected, cancelled] = [ids.slice(0, 2), ids.slice(2, 4), ids.slice(4, 5)]
  await db.sql`update iddqueue.messages set state = 'done' where id = any(${done}::uuid[])`
  await db.sql`update iddqueue.messages set state = 'rejected',
      failure = ${db.sql.json({ type: 'TypeError', message: 'boom', at: new Date(0).toISOString(), attempt: 1 })}
    where id = any(${rejected}::uuid[])`
  await db.sql`update iddqueue.messages set state = 'cancelled' where id = any(${cancelled}::uuid[])`
  return { queue, queued: ids.slice(5) }
}

/** One bad value for one field of an options object, the rest valid or absent. */
function oneBad<T extends Record<string, fc.Arbitrary<unknown>>>(bad: T) {
  return fc.oneof(
    ...Object.entries(bad).map(([key, value]) =>
      value.map((v) => ({ key, options: { [key]: v } as Record<string, unknown> })),
    ),
  )
}

const RUNS = { numRuns: 60 }

/** The longest delay a Node timer keeps: past it, setTimeout fires at once. */
const TIMER_MAX = 2_147_483_647
/** The longest retention (and staleness): 100 years. */
const RETENTION_MAX = 3_155_760_000_000

/**
 * For random options with one bad field of `bad` (the rest absent), `call`
 * is refused before any SQL: a bad `queue` or `actor` with
 * InvalidIdentifierError naming the name, any other field with
 * InvalidOptionError whose `option` is that field.
 */
async function refusesEach(
  broker: Broker,
  bad: Record<string, fc.Arbitrary<unknown>>,
  call: (broker: Broker, options: Record<string, unknown>) => unknown,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(oneBad(bad), async ({ key, options }) => {
      const name = key === 'queue' || key === 'actor'
      await refusedBeforeSql(
        (b) => call(b, options),
        name ? InvalidIdentifierError : InvalidOptionError,
        [name ? `${key} name` : key],
        broker,
        name ? undefined : key,
      )
    }),
    RUNS,
  )
}

describe('bulk operations refuse bad filters before any SQL', () => {
  const badBulk = {
    batchSize: notIntegerIn(1, 10_000),
    dryRun: fc.oneof(wrongType, badNumber).filter((v) => typeof v !== 'boolean'),
    onProgress: fc.oneof(wrongType, badNumber).filter((v) => typeof v !== 'function'),
    queue: badName,
    actor: badName,
  }

  it('retryFailed({...}): batchSize, dryRun, onProgress, queue, actor, failedBefore, errorType, unknown keys', async () => {
    const broker = db.broker()
    await seed(broker)
    await refusesEach(
      broker,
      {
        ...badBulk,
        failedBefore: badTime,
        errorType: fc.oneof(
          fc.constantFrom('', 'e'.repeat(201), '\u0000', 'Type\u0000Error', '\ud800', 'Type\udc00'),
          // Text PostgreSQL cannot store (\u0000) or would turn into U+FFFD (a lone surrogate).
          fc
            .tuple(
              fc.string({ maxLength: 20 }),
              fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff'),
              fc.string({ maxLength: 20 }),
            )
            .map(([head, bad, tail]) => head + bad + tail),
          wrongType.filter((v) => typeof v !== 'string'),
        ),
      },
      (b, options) => b.retryFailed(options as never),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1 }).filter((k) => !KNOWN_RETRY.includes(k)),
        async (key) => {
          await refusedBeforeSql(
            (b) => b.retryFailed({ [key]: 1 } as never),
            InvalidOptionError,
            [JSON.stringify(key)],
            broker,
            key,
          )
        },
      ),
      { numRuns: 30 },
    )
  }, 60_000)

  it('cancelMany: batchSize, dryRun, onProgress, queue, actor, state, and a non-object filter', async () => {
    const broker = db.broker()
    await seed(broker)
    await refusesEach(
      broker,
      {
        ...badBulk,
        state: fc.oneof(
          fc.constantFrom('done', 'rejected', 'cancelled', 'QUEUED', ' queued', ''),
          hostileString,
        ),
      },
      (b, options) => b.cancelMany(options as never),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(hostileString, fc.integer(), fc.constant(null), fc.array(fc.integer())),
        async (filter) => {
          await refusedBeforeSql(
            (b) => b.cancelMany(filter as never),
            InvalidOptionError,
            ['cancelMany'],
            broker,
          )
        },
      ),
      { numRuns: 30 },
    )
  }, 60_000)

  it('deleteMessages: batchSize, dryRun, onProgress, queue, actor, state, finishedBefore', async () => {
    const broker = db.broker()
    await seed(broker)
    await refusesEach(
      broker,
      {
        ...badBulk,
        state: fc.oneof(
          fc.constantFrom('queued', 'consumed', 'DONE', '', [], ['done', 'queued'], [null]),
          hostileString,
          fc.array(hostileString, { minLength: 1, maxLength: 3 }),
        ),
        finishedBefore: badTime,
      },
      (b, options) => b.deleteMessages(options as never),
    )
  }, 60_000)

  it('accept every valid filter: a dry run counts and changes nothing', async () => {
    const broker = db.broker()
    const { queue } = await seed(broker)
    const common = {
      queue: fc.oneof(fc.constant(queue), validName),
      actor: fc.oneof(fc.constant('ops_prop'), validName),
      batchSize: fc.integer({ min: 1, max: 10_000 }),
      dryRun: fc.constant(true),
      onProgress: fc.constant(() => {}),
    }
    const before = await snapshot()
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            ...common,
            failedBefore: goodTime,
            // Any well-formed text of 1 to 200 UTF-16 units without \u0000.
            errorType: fc
              .string({ unit: 'grapheme', minLength: 1, maxLength: 200 })
              .filter((s) => s.length <= 200 && !s.includes('\u0000')),
          },
          { requiredKeys: ['dryRun'] },
        ),
        fc.record(
          { ...common, state: fc.constantFrom('queued', 'consumed') },
          { requiredKeys: ['dryRun'] },
        ),
        fc.record(
          {
            ...common,
            state: fc.oneof(
              fc.constantFrom('done', 'rejected', 'cancelled'),
              fc.uniqueArray(fc.constantFrom('done', 'rejected', 'cancelled'), { minLength: 1 }),
            ),
            finishedBefore: goodTime,
          },
          { requiredKeys: ['dryRun'] },
        ),
        async (retry, cancel, remove) => {
          const retried = await broker.retryFailed(retry as never)
          expect(retried).toEqual({ retried: expect.any(Number), dryRun: true })
          const cancelled = await broker.cancelMany(cancel as never)
          expect(cancelled).toEqual({
            cancelled: expect.any(Number),
            requested: expect.any(Number),
            dryRun: true,
          })
          const deleted = await broker.deleteMessages(remove as never)
          expect(deleted).toEqual({ deleted: expect.any(Number), dryRun: true })
        },
      ),
      RUNS,
    )
    expect(await snapshot(), 'dry runs changed nothing').toBe(before)
    // The seeded queue's counts, exactly.
    expect(await broker.retryFailed({ queue, dryRun: true })).toEqual({ retried: 2, dryRun: true })
    expect(await broker.deleteMessages({ queue, dryRun: true })).toEqual({
      deleted: 5,
      dryRun: true,
    })
    expect(await broker.cancelMany({ queue, state: 'queued', dryRun: true })).toEqual({
      cancelled: 3,
      requested: 0,
      dryRun: true,
    })
  }, 60_000)
})

const KNOWN_RETRY = [
  'queue',
  'actor',
  'failedBefore',
  'errorType',
  'dryRun',
  'batchSize',
  'onProgress',
]

/** Anything but a UUID. */
const badId = fc.oneof(
  hostileString,
  fc.uuid().map((id) => id.toUpperCase().replace(/-/g, '')),
  fc.uuid().map((id) => `${id} `),
  fc.uuid().map((id) => `{${id}}`),
  wrongType.filter((v) => typeof v !== 'string'),
)

describe('single-message operations refuse bad ids and options before any SQL', () => {
  it('listFailed: limit, queue, actor, after', async () => {
    const broker = db.broker()
    await seed(broker)
    await refusesEach(
      broker,
      { limit: notIntegerIn(1, 1000), queue: badName, actor: badName, after: badId },
      (b, options) => b.listFailed(options as never),
    )
    // Valid pages: never more than the limit, every item rejected.
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            limit: fc.integer({ min: 1, max: 1000 }),
            queue: validName,
            actor: validName,
            after: fc.uuid(),
          },
          { requiredKeys: [] },
        ),
        async (options) => {
          const page = await broker.listFailed(options)
          expect(page.items.length).toBeLessThanOrEqual(options.limit ?? 50)
        },
      ),
      RUNS,
    )
  }, 60_000)

  it('getMessage and showFailed: id and payload', async () => {
    const broker = db.broker()
    const { queued } = await seed(broker)
    for (const read of ['getMessage', 'showFailed'] as const) {
      await fc.assert(
        fc.asyncProperty(badId, async (id) => {
          await refusedBeforeSql(
            (b) => b[read](id as never),
            InvalidOptionError,
            ['message id'],
            broker,
            'message id',
          )
        }),
        RUNS,
      )
      await refusesEach(
        broker,
        { payload: fc.oneof(wrongType, badNumber).filter((v) => typeof v !== 'boolean') },
        (b, options) => b[read](queued[0]!, options as never),
      )
    }
    await fc.assert(
      fc.asyncProperty(
        fc.uuid(),
        fc.option(fc.boolean(), { nil: undefined }),
        async (id, payload) => {
          expect(await broker.getMessage(id, { payload })).toBeUndefined()
          const info = await broker.getMessage(queued[0]!, { payload })
          expect(info?.state).toBe('queued')
          expect('args' in (info ?? {})).toBe(payload === true)
        },
      ),
      { numRuns: 30 },
    )
  }, 60_000)

  it('reschedule: id, eta, delayMs, priority, unknown keys and an empty change', async () => {
    const broker = db.broker()
    const { queued } = await seed(broker)
    const id = queued[0]!
    await fc.assert(
      fc.asyncProperty(badId, async (bad) => {
        await refusedBeforeSql(
          (b) => b.reschedule(bad as never, { priority: 1 }),
          InvalidOptionError,
          ['message id'],
          broker,
        )
      }),
      { numRuns: 30 },
    )
    await refusesEach(
      broker,
      {
        eta: fc.oneof(
          fc.constantFrom(
            Number.NaN,
            Number.POSITIVE_INFINITY,
            8.64e15 + 1,
            -2.2e14,
            new Date(Number.NaN),
          ),
          wrongType.filter((v) => !(v instanceof Date)),
        ),
        delayMs: fc.oneof(
          fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -1, -0.5, 8.64e15),
          wrongType,
        ),
        priority: notIntegerIn(-2_147_483_647, 2_147_483_647),
      },
      (b, options) => b.reschedule(id, options as never),
    )
    await refusedBeforeSql((b) => b.reschedule(id, {}), InvalidOptionError, ['reschedule'], broker)
    await refusedBeforeSql(
      (b) => b.reschedule(id, { eta: 0, delayMs: 0 }),
      InvalidOptionError,
      ['delayMs', 'eta'],
      broker,
    )
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1 }).filter((k) => !['eta', 'delayMs', 'priority'].includes(k)),
        async (key) => {
          await refusedBeforeSql(
            (b) => b.reschedule(id, { [key]: 1 } as never),
            InvalidOptionError,
            [JSON.stringify(key)],
            broker,
          )
        },
      ),
      { numRuns: 30 },
    )
    // Valid changes are stored as given.
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.record({ eta: safeInt(-2.1e14, 8.64e15) }),
          fc.record({
            eta: fc.date({ min: new Date(-2.1e14), max: new Date(8.64e15), noInvalidDate: true }),
          }),
          fc.record({ delayMs: safeInt(0, 1e15) }),
        ),
        fc.option(fc.integer({ min: -2_147_483_647, max: 2_147_483_647 }), { nil: undefined }),
        async (when, priority) => {
          const result = await broker.reschedule(id, { ...when, priority })
          expect(result.status).toBe('rescheduled')
          const [row] =
            await db.sql`select priority, (extract(epoch from eta) * 1000)::float8 as eta
            from iddqueue.messages where id = ${id}`
          if (priority !== undefined) expect(row?.priority).toBe(priority)
          if ('eta' in when) {
            const ms = when.eta instanceof Date ? when.eta.getTime() : when.eta
            // to_timestamp(ms / 1000) keeps microseconds: within 2 ms even 275,000 years out.
            expect(Math.abs((row?.eta as number) - ms)).toBeLessThanOrEqual(2)
          }
        },
      ),
      RUNS,
    )
  }, 60_000)
})

describe('maintenance operations refuse bad options before any SQL', () => {
  it('purge: olderThanMs and batchSize', async () => {
    const broker = db.broker()
    await seed(broker)
    await refusesEach(
      broker,
      {
        // Past 100 years, now() - olderThanMs is no timestamp PostgreSQL holds.
        olderThanMs: notIntegerIn(0, RETENTION_MAX),
        batchSize: notIntegerIn(0),
        onProgress: fc.oneof(wrongType, badNumber).filter((v) => typeof v !== 'function'),
      },
      (b, options) => b.purge(options as never),
    )
    // Valid options run and keep every recent message.
    const before = await snapshot()
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            olderThanMs: safeInt(3_600_000, 100 * 365 * 24 * 3_600_000),
            batchSize: fc.integer({ min: 0, max: 1_000_000 }),
            onProgress: fc.constant(() => {}),
          },
          { requiredKeys: [] },
        ),
        async (options) => {
          const result = await broker.purge(options)
          expect(result.messages).toBe(0)
        },
      ),
      { numRuns: 30 },
    )
    expect(await snapshot()).toBe(before)
  }, 60_000)

  it('recover, pause and cancel: staleAfterMs, timeoutMs and the options object', async () => {
    const broker = db.broker()
    const { queue, queued } = await seed(broker)
    await refusesEach(
      broker,
      // Past 100 years, now() - staleAfterMs is no timestamp PostgreSQL holds.
      { staleAfterMs: notIntegerIn(0, RETENTION_MAX) },
      (b, options) => b.recover(options as never),
    )
    // Refused before the pause or the cancellation is stored.
    await refusesEach(broker, { timeoutMs: notIntegerIn(0, TIMER_MAX) }, (b, options) =>
      b.pause(queue, options as never),
    )
    await refusesEach(broker, { timeoutMs: notIntegerIn(0, TIMER_MAX) }, (b, options) =>
      b.cancel(queued[0]!, options as never),
    )
    expect(await broker.isPaused(queue)).toBe(false)
    expect((await broker.getMessage(queued[0]!))?.state).toBe('queued')
    for (const run of [
      (b: Broker, options: unknown) => b.recover(options as never),
      (b: Broker, options: unknown) => b.flush(options as never),
      (b: Broker, options: unknown) => b.pause(queue, options as never),
      (b: Broker, options: unknown) => b.cancel(queued[0]!, options as never),
    ]) {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(fc.constant(null), hostileString, badNumber, fc.array(fc.integer())),
          async (options) => {
            await refusedBeforeSql(
              (b) => run(b, options),
              InvalidOptionError,
              ['options'],
              broker,
              'options',
            )
          },
        ),
        { numRuns: 20 },
      )
    }
  }, 60_000)

  it('join: queue names', async () => {
    const broker = db.broker()
    await seed(broker)
    await fc.assert(
      fc.asyncProperty(
        fc
          .array(fc.oneof(validName, badName), { minLength: 1, maxLength: 4 })
          .filter((queues) =>
            queues.some(
              (q) => typeof q !== 'string' || !/^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$/.test(q),
            ),
          ),
        async (queues) => {
          await refusedBeforeSql(
            (b) => b.join({ queues: queues as never, timeoutMs: 100 }),
            InvalidIdentifierError,
            ['queue name'],
            broker,
          )
        },
      ),
      RUNS,
    )
    // Valid names of queues with nothing pending: join returns at once.
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(validName, { minLength: 0, maxLength: 4 }), async (names) => {
        const queues = names.map((name) => `${uniqueQueue('join')}${name}`.slice(0, 128))
        await broker.join({ queues, timeoutMs: 5_000, intervalMs: 10 })
      }),
      { numRuns: 30 },
    )
  }, 60_000)
})

describe('worker options, under random values', () => {
  const bounds = {
    queryTimeoutMs: 100,
    shutdownTimeoutMs: 0,
    purgeIntervalMs: 10,
    retentionMs: 1,
  } as const

  it('refuses a bad queryTimeoutMs, shutdownTimeoutMs, purgeIntervalMs or retentionMs, naming it', async () => {
    await fc.assert(
      fc.asyncProperty(
        oneBad({
          // Timer-backed options also stop at 2^31 - 1 ms, the longest setTimeout.
          queryTimeoutMs: notIntegerIn(bounds.queryTimeoutMs, TIMER_MAX),
          shutdownTimeoutMs: notIntegerIn(bounds.shutdownTimeoutMs, TIMER_MAX),
          purgeIntervalMs: notIntegerIn(bounds.purgeIntervalMs, TIMER_MAX).filter(
            (v) => v !== false,
          ),
          // Retention stops at 100 years: older cut-offs are not timestamps PostgreSQL holds.
          retentionMs: notIntegerIn(bounds.retentionMs, RETENTION_MAX),
        }),
        async ({ key, options }) => {
          await refused(() => offline.worker(options as never), InvalidOptionError, [key])
        },
      ),
      { numRuns: 200 },
    )
  })

  it('accepts every integer within the bounds (and purgeIntervalMs false)', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            queryTimeoutMs: safeInt(bounds.queryTimeoutMs, TIMER_MAX),
            shutdownTimeoutMs: safeInt(bounds.shutdownTimeoutMs, TIMER_MAX),
            purgeIntervalMs: fc.oneof(
              fc.constant(false as const),
              safeInt(bounds.purgeIntervalMs, TIMER_MAX),
            ),
            retentionMs: safeInt(bounds.retentionMs, RETENTION_MAX),
          },
          { requiredKeys: [] },
        ),
        (options) => {
          const worker = offline.worker(options)
          expect(worker).toBeDefined()
        },
      ),
      { numRuns: 200 },
    )
  })

  it('never throws anything but an IddqueueError for any value', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            queryTimeoutMs: fc.oneof(wrongType, badNumber, fc.integer()),
            shutdownTimeoutMs: fc.oneof(wrongType, badNumber, fc.integer()),
            purgeIntervalMs: fc.oneof(wrongType, badNumber, fc.integer()),
            retentionMs: fc.oneof(wrongType, badNumber, fc.integer()),
          },
          { requiredKeys: [] },
        ),
        (options) => {
          try {
            offline.worker(options as never)
          } catch (error) {
            expect(IddqueueError.isInstance(error), String(error)).toBe(true)
          }
        },
      ),
      { numRuns: 200 },
    )
  })
})
