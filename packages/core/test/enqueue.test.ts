import { namespace } from '@iddqueue/schema'
import postgres from 'postgres'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  type Broker,
  BrokerClosedError,
  BrokerConnectionError,
  createBroker,
  type EnqueueEvent,
  type IddqueuePlugin,
  InvalidIdentifierError,
  InvalidOptionError,
  InvalidPayloadError,
  isUuid,
  MAX_BATCH,
  Message,
  SchemaNotReadyError,
} from '../src/index.js'
import { collectNotifications, setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()
/** The wake-up channel of the default namespace (what `broker.namespace.channel('wake')` gives). */
const WAKE = namespace().channel('wake')

let wake: Awaited<ReturnType<typeof collectNotifications>> | undefined

beforeEach(async () => {
  await db.sql`truncate iddqueue.messages, iddqueue.deduplication`
  wake = await collectNotifications(db.sql, WAKE)
})

afterEach(async () => {
  await wake?.stop()
  wake = undefined
})

/**
 * The wake-ups received so far. Sends the broker commits itself notify after
 * their commit (decision 0010): every broker of the test sends its pending
 * wake-ups first.
 */
const wakeUps = async (...brokers: Broker[]) => {
  for (const broker of brokers) await broker.context.waker.drain()
  await db.wakeUpsSent()
  return wake!.settled()
}

async function messageCount(): Promise<number> {
  const [row] = await db.sql`select count(*)::int as n from iddqueue.messages`
  return row!.n as number
}

/** A broker on a postgres.js instance that records every statement it is sent. */
function recordingBroker(): { broker: Broker; queries: string[]; close(): Promise<void> } {
  const queries: string[] = []
  const sql = postgres(db.url, {
    max: 2,
    onnotice: () => {},
    // postgres.js reads the array types once per connection: not the broker's SQL.
    debug: (_connection, query) => {
      // Nor the wake-ups sent after a send's commit (decision 0010): \`wakeUps()\` checks those.
      if (
        !query.includes('pg_catalog.pg_type') &&
        !query.includes('from unnest($2::text[]) as queue')
      )
        queries.push(query)
    },
  })
  const broker = createBroker({ sql })
  return {
    broker,
    queries,
    async close() {
      await broker.close()
      await sql.end()
    },
  }
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (error: unknown) => error as Error,
  )
}

describe('a single send', () => {
  it('stores one queued row and sends one wake-up with the queue name', async () => {
    const broker = db.broker()
    const add = broker.actor('add', (a: number, b: number) => a + b, {
      queue: 'math',
      priority: 7,
    })
    const sent = await add.send(1, 2)

    expect(sent).toBeInstanceOf(Message)
    expect(isUuid(sent.id)).toBe(true)
    expect(sent.id[14]).toBe('7') // UUID version 7
    expect(sent).toMatchObject({ actor: 'add', queue: 'math', args: [1, 2], priority: 7 })
    expect(sent.eta).toBeUndefined()

    const rows = await db.sql`
      select id, queue, actor, state, priority, args, options, retries, attempts,
             worker_id, started_at, cancel_requested, failure,
             eta = enqueued_at as eta_is_enqueue_time,
             extract(epoch from (now() - eta)) * 1000 as age_ms
        from iddqueue.messages`
    expect(rows).toHaveLength(1)
    const row = rows[0]!
    expect(row).toMatchObject({
      id: sent.id,
      queue: 'math',
      actor: 'add',
      state: 'queued',
      priority: 7,
      args: [1, 2],
      options: {},
      retries: 0,
      attempts: 0,
      worker_id: null,
      started_at: null,
      cancel_requested: false,
      failure: null,
      eta_is_enqueue_time: true,
    })
    // eta is PostgreSQL's now() at the insert: in the recent past by its own clock.
    expect(Number(row.age_ms)).toBeGreaterThanOrEqual(0)
    expect(Number(row.age_ms)).toBeLessThan(5_000)

    expect(await wakeUps(broker)).toEqual(['math'])
  })

  it('emits message:enqueued once per written message', async () => {
    const broker = db.broker()
    const seen: string[] = []
    broker.on('message:enqueued', ({ message }) => seen.push(message.id))
    const echo = broker.actor('echo', (text: string) => text)
    const one = await echo.send('a')
    const [two, three] = await broker.enqueueMany([echo.message('b'), echo.message('c')])
    expect(seen).toEqual([one.id, two!.id, three!.id])
  })

  it('sets eta to PostgreSQL time plus delayMs', async () => {
    const broker = db.broker()
    const later = broker.actor('later', (n: number) => n, { queue: 'later' })
    const before = Date.now()
    const sent = await later.sendWithOptions({ args: [1], delayMs: 1_500 })
    const after = Date.now()

    const [row] = await db.sql`
      select extract(epoch from (eta - enqueued_at)) * 1000 as delay_ms,
             extract(epoch from (eta - now())) * 1000 as left_ms
        from iddqueue.messages where id = ${sent.id}`
    // Both come from the same now() of the insert: the difference is the delay.
    expect(Number(row!.delay_ms)).toBeCloseTo(1_500, 3)
    expect(Number(row!.left_ms)).toBeGreaterThan(0)
    expect(Number(row!.left_ms)).toBeLessThanOrEqual(1_500)
    // The returned message carries an estimate of the same eta.
    expect(sent.eta).toBeInstanceOf(Date)
    expect(sent.eta!.getTime()).toBeGreaterThanOrEqual(before + 1_500)
    expect(sent.eta!.getTime()).toBeLessThanOrEqual(after + 1_500)
    expect(await wakeUps(broker)).toEqual(['later'])
  })

  it('treats delayMs 0 as no delay', async () => {
    const broker = db.broker()
    const now = broker.actor('now', () => 1)
    const sent = await now.sendWithOptions({ args: [], delayMs: 0 })
    expect(sent.eta).toBeUndefined()
    const [row] = await db.sql`select eta = enqueued_at as same from iddqueue.messages`
    expect(row!.same).toBe(true)
  })

  it('stores an absolute eta given as a Date or as epoch milliseconds', async () => {
    const broker = db.broker()
    const at = broker.actor('at', (n: number) => n)
    const date = new Date(Date.now() + 3_600_123)
    const epoch = Date.UTC(2031, 0, 2, 3, 4, 5, 678)
    const past = new Date('2001-02-03T04:05:06.789Z')
    const byDate = await at.sendWithOptions({ args: [1], eta: date })
    const byEpoch = await broker.enqueue(at.message(2), { eta: epoch })
    const inPast = await at.sendWithOptions({ args: [3], eta: past })

    expect(byDate.eta).toEqual(date)
    expect(byEpoch.eta).toEqual(new Date(epoch))
    expect(inPast.eta).toEqual(past)
    const rows = await db.sql`
      select id, extract(epoch from eta) * 1000 as eta_ms from iddqueue.messages`
    const etas = Object.fromEntries(rows.map((r) => [r.id, Number(r.eta_ms)]))
    expect(etas).toEqual({
      [byDate.id]: date.getTime(),
      [byEpoch.id]: epoch,
      [inPast.id]: past.getTime(),
    })
  })

  it.each([
    [{ delayMs: 10, eta: Date.now() }, 'send to opt: give delayMs or eta, not both'],
    [{ delayMs: 10, eta: new Date() }, 'send to opt: give delayMs or eta, not both'],
    [{ delayMs: -1 }, 'send to opt: invalid delayMs -1: expected a finite number of milliseconds'],
    [{ delayMs: Number.NaN }, 'send to opt: invalid delayMs NaN: expected a finite number'],
    [{ delayMs: Number.POSITIVE_INFINITY }, 'send to opt: invalid delayMs Infinity'],
    [{ delayMs: '100' as unknown as number }, 'send to opt: invalid delayMs "100"'],
    [{ delayMs: 1e300 }, 'send to opt: invalid delayMs 1e+300'],
    [{ eta: new Date('not a date') }, 'send to opt: invalid eta Invalid Date'],
    [{ eta: Number.NaN }, 'send to opt: invalid eta NaN'],
    [{ eta: 1e20 }, 'send to opt: invalid eta 100000000000000000000'],
    [{ eta: new Date(-8.64e15) }, 'send to opt: invalid eta'],
    // Passes instanceof Date, yet Date's own getTime throws on it: refused, not a TypeError.
    [{ eta: Object.create(Date.prototype) }, 'send to opt: invalid eta an object'],
    [{ priority: 1.5 }, 'Invalid priority 1.5 (send to opt): expected an integer'],
    [{ priority: 2 ** 31 }, 'Invalid priority 2147483648 (send to opt)'],
  ])('refuses %o before any SQL', async (options, text) => {
    const { broker, queries, close } = recordingBroker()
    try {
      const opt = broker.actor('opt', (n: number) => n)
      const error = await rejection(opt.sendWithOptions({ args: [1], ...options }))
      expect(InvalidOptionError.isInstance(error)).toBe(true)
      expect(error.message).toContain(text)
      const batchError = await rejection(
        broker.enqueueMany([opt.message(0), { message: opt.message(1), ...options }]),
      )
      expect(InvalidOptionError.isInstance(batchError)).toBe(true)
      expect(batchError.message).toContain(text.replace('send to opt', 'batch entry 1 (opt)'))
      expect(queries).toEqual([])
    } finally {
      await close()
    }
    expect(await messageCount()).toBe(0)
    expect(await wakeUps()).toEqual([])
  })

  it('accepts the extreme etas PostgreSQL and Date both hold', async () => {
    const broker = db.broker()
    const far = broker.actor('far', (n: number) => n)
    const latest = await far.sendWithOptions({ args: [1], eta: new Date(8.64e15) })
    const earliest = await far.sendWithOptions({ args: [2], eta: -210_866_803_200_000 })
    const rows = await db.sql`
      select id, extract(epoch from eta) * 1000 as eta_ms from iddqueue.messages`
    const etas = Object.fromEntries(rows.map((r) => [r.id, Number(r.eta_ms)]))
    expect(etas).toEqual({ [latest.id]: 8.64e15, [earliest.id]: -210_866_803_200_000 })
  })

  it('overrides the actor priority per send', async () => {
    const broker = db.broker()
    const job = broker.actor('job', (n: number) => n, { priority: 3 })
    const plain = await job.send(1)
    const urgent = await job.sendWithOptions({ args: [2], priority: -5 })
    const built = await broker.enqueue(job.messageWithOptions({ args: [3], priority: 9 }))
    const overridden = await broker.enqueue(job.message(4), { priority: 100 })
    expect([plain.priority, urgent.priority, built.priority, overridden.priority]).toEqual([
      3, -5, 9, 100,
    ])
    const rows = await db.sql`select args, priority from iddqueue.messages order by id`
    expect(rows).toEqual([
      { args: [1], priority: 3 },
      { args: [2], priority: -5 },
      { args: [3], priority: 9 },
      { args: [4], priority: 100 },
    ])
  })

  it('sends to an actor this broker does not declare, with an explicit queue', async () => {
    const broker = db.broker()
    const message = broker.message('remote_actor', [1, { a: 'b' }], {
      queue: 'remote',
      priority: 4,
    })
    expect(message).toMatchObject({ actor: 'remote_actor', queue: 'remote', priority: 4 })
    const sent = await broker.enqueue(message)
    expect(sent).toBe(message)
    const fallback = await broker.enqueue(broker.message('elsewhere', []))
    expect(fallback.queue).toBe('default')
    const rows =
      await db.sql`select actor, queue, priority, args from iddqueue.messages order by id`
    expect(rows).toEqual([
      { actor: 'remote_actor', queue: 'remote', priority: 4, args: [1, { a: 'b' }] },
      { actor: 'elsewhere', queue: 'default', priority: 0, args: [] },
    ])
    expect((await wakeUps()).sort()).toEqual(['default', 'remote'])
  })

  it('refuses bad names and non-messages without SQL', async () => {
    const { broker, queries, close } = recordingBroker()
    try {
      expect(() => broker.message('x', [], { queue: 'a b' })).toThrow(InvalidIdentifierError)
      expect(() => broker.message('x', [], { queue: 'a b' })).toThrow('Invalid queue name "a b"')
      expect(() => broker.message('', [])).toThrow('Invalid actor name ""')
      expect(() => broker.message('x', 'nope' as unknown as unknown[])).toThrow(
        'Invalid arguments "nope" (for actor x): expected an array',
      )
      const notMessage = { id: 'x', actor: 'x', queue: 'q', args: [] } as unknown as Message
      await expect(broker.enqueue(notMessage)).rejects.toThrow(
        'Invalid message: expected a Message from actor.message() or broker.message()',
      )
      await expect(broker.enqueueMany([broker.message('x', []), notMessage])).rejects.toThrow(
        'Invalid batch entry 1: expected a Message or { message, ...options }',
      )
      await expect(broker.enqueueMany('x' as unknown as Message[])).rejects.toThrow(
        'Invalid batch: expected an array of messages',
      )
      expect(queries).toEqual([])
    } finally {
      await close()
    }
  })

  it('stores a re-enqueued Message object once, without a second wake-up', async () => {
    const { broker, queries, close } = recordingBroker()
    const once = broker.actor('once', (n: number) => n)
    const message = once.message(1)
    let sends: Message[]
    try {
      const first = await broker.enqueue(message)
      const second = await broker.enqueue(message)
      const delayed = await broker.enqueue(message, { delayMs: 60_000 })
      const [inBatch] = await broker.enqueueMany([message, message])
      sends = [first, second, delayed, inBatch!]
    } finally {
      await close()
    }
    expect(sends.map((m) => m.id)).toEqual(Array(4).fill(message.id))
    // A new id takes the plain insert; an id already stored fails it and is
    // sent again with the insert that skips existing ids.
    const skips = queries.map((q) => q.includes('on conflict (id) do nothing'))
    expect(skips).toEqual([false, false, true, false, true, false, true])
    const rows = await db.sql`select id, eta = enqueued_at as undelayed from iddqueue.messages`
    // The first write wins: the later delay changed nothing.
    expect(rows).toEqual([{ id: message.id, undelayed: true }])
    expect(await wakeUps()).toEqual(['default'])
  })
})

describe('enqueueMany', () => {
  it('returns the messages in input order with their own delay and priority', async () => {
    const broker = db.broker()
    const a = broker.actor('a', (n: number) => n, { queue: 'qa', priority: 1 })
    const b = broker.actor('b', (s: string) => s, { queue: 'qb' })
    const eta = new Date(Date.now() + 7_200_000)
    const entries = [
      a.message(1),
      { message: b.message('x'), delayMs: 5_000 },
      { message: a.message(2), priority: -3 },
      { message: b.message('y'), eta },
      { message: a.message(3), delayMs: 250, priority: 8 },
    ]
    const sent = await broker.enqueueMany(entries)

    expect(sent.map((m) => m.args)).toEqual([[1], ['x'], [2], ['y'], [3]])
    expect(sent.map((m) => m.priority)).toEqual([1, 0, -3, 0, 8])
    expect(sent[0]!.eta).toBeUndefined()
    expect(sent[1]!.eta).toBeInstanceOf(Date)
    expect(sent[3]!.eta).toEqual(eta)
    // Unchanged entries come back as the very objects given.
    expect(sent[0]).toBe(entries[0])

    const rows = await db.sql`
      select id, queue, actor, priority, args,
             round(extract(epoch from (eta - enqueued_at)) * 1000) as delay_ms,
             extract(epoch from eta) * 1000 as eta_ms
        from iddqueue.messages`
    const byId = new Map(rows.map((r) => [r.id as string, r]))
    expect(sent.map((m) => byId.get(m.id)?.queue)).toEqual(['qa', 'qb', 'qa', 'qb', 'qa'])
    expect(sent.map((m) => byId.get(m.id)?.priority)).toEqual([1, 0, -3, 0, 8])
    expect(sent.map((m) => Number(byId.get(m.id)?.delay_ms))).toEqual([
      0,
      5_000,
      0,
      Number(byId.get(sent[3]!.id)?.delay_ms),
      250,
    ])
    expect(Number(byId.get(sent[3]!.id)?.eta_ms)).toBe(eta.getTime())
    // One wake-up per distinct queue of the batch.
    expect((await wakeUps()).sort()).toEqual(['qa', 'qb'])
  })

  it('writes 1,000 messages in one statement with one wake-up per queue', async () => {
    const { broker, queries, close } = recordingBroker()
    try {
      const actors = ['q1', 'q2', 'q3'].map((queue) =>
        broker.actor(`in_${queue}`, (n: number) => n, { queue }),
      )
      const entries = Array.from({ length: MAX_BATCH }, (_, i) => actors[i % 3]!.message(i))
      const sent = await broker.enqueueMany(entries)
      expect(sent).toHaveLength(1000)
      expect(sent.map((m) => m.args[0])).toEqual(entries.map((_, i) => i))
      expect(queries).toHaveLength(1)
      expect(queries[0]).toContain('insert into "iddqueue"."messages"')
    } finally {
      await close()
    }
    const rows =
      await db.sql`select queue, count(*)::int as n from iddqueue.messages group by queue order by queue`
    expect(rows).toEqual([
      { queue: 'q1', n: 334 },
      { queue: 'q2', n: 333 },
      { queue: 'q3', n: 333 },
    ])
    expect((await wakeUps()).sort()).toEqual(['q1', 'q2', 'q3'])
  })

  it('refuses 1,001 messages before any SQL', async () => {
    const { broker, queries, close } = recordingBroker()
    try {
      const n = broker.actor('n', (i: number) => i)
      const entries = Array.from({ length: MAX_BATCH + 1 }, (_, i) => n.message(i))
      const error = await rejection(broker.enqueueMany(entries))
      expect(InvalidOptionError.isInstance(error)).toBe(true)
      expect(error.message).toBe('Invalid batch of 1001 messages: the limit is 1000')
      expect(queries).toEqual([])
    } finally {
      await close()
    }
    expect(await messageCount()).toBe(0)
  })

  it('writes nothing when one entry is bad', async () => {
    const broker = db.broker()
    const n = broker.actor('n', (i: unknown) => i)
    const entries = Array.from({ length: 1000 }, (_, i) => n.message(i === 500 ? 500n : i))
    const error = await rejection(broker.enqueueMany(entries))
    expect(InvalidPayloadError.isInstance(error)).toBe(true)
    expect(error.message).toMatch(/^batch entry 500 \(n\): args\[0\] is a BigInt/)
    expect(await messageCount()).toBe(0)
    expect(await wakeUps()).toEqual([])
  })

  it('does no SQL for an empty batch', async () => {
    const { broker, queries, close } = recordingBroker()
    try {
      expect(await broker.enqueueMany([])).toEqual([])
      expect(queries).toEqual([])
    } finally {
      await close()
    }
    expect(await wakeUps()).toEqual([])
  })
})

describe('errors from PostgreSQL', () => {
  it('gives SchemaNotReadyError when the tables are missing', async () => {
    const broker = db.broker({ namespace: { schema: 'nothing_here' } })
    const ghost = broker.actor('ghost', () => 1)
    const error = await rejection(ghost.send())
    expect(error).toBeInstanceOf(SchemaNotReadyError)
    expect(error.message).toBe(
      'Could not enqueue a message for ghost: the iddqueue tables do not exist; run broker.migrate() or apply generateInitSql() first',
    )
    expect((error.cause as { code?: string }).code).toBe('42P01')
    const batch = await rejection(broker.enqueueMany([ghost.message(), ghost.message()]))
    expect(SchemaNotReadyError.isInstance(batch)).toBe(true)
    expect(batch.message).toMatch(/^Could not enqueue 2 messages: /)
  })

  it('gives BrokerConnectionError with a cause when PostgreSQL is unreachable', async () => {
    const broker = db.broker({ url: 'postgres://root@127.0.0.1:1/test' })
    const lost = broker.actor('lost', () => 1)
    const error = await rejection(lost.send())
    expect(error).toBeInstanceOf(BrokerConnectionError)
    expect(error.message).toMatch(
      /^Could not enqueue a message for lost: PostgreSQL is unreachable \(.*ECONNREFUSED/,
    )
    expect(error.cause).toBeInstanceOf(Error)
    expect((error.cause as { code?: string }).code).toBe('ECONNREFUSED')
  })

  it('gives BrokerClosedError after close()', async () => {
    const broker = db.broker()
    const done = broker.actor('done', (n: number) => n)
    await done.send(1)
    await broker.close()
    await broker.close() // twice is fine
    const error = await rejection(done.send(2))
    expect(BrokerClosedError.isInstance(error)).toBe(true)
    expect(error.message).toBe('The broker is closed')
    await expect(broker.enqueueMany([done.message(3)])).rejects.toThrow(BrokerClosedError)
    await expect(broker.enqueue(done.message(4))).rejects.toThrow(BrokerClosedError)
    expect(await messageCount()).toBe(1)
  })
})

describe('enqueue middleware', () => {
  function spy(name: string, calls: EnqueueEvent[]): IddqueuePlugin {
    return {
      name,
      middleware: {
        async enqueue(event, next) {
          calls.push(event)
          await next()
        },
      },
    }
  }

  it('runs once per written batch and sees the messages', async () => {
    const calls: EnqueueEvent[] = []
    const broker = db.broker({ plugins: [spy('spy', calls)] })
    const job = broker.actor('job', (n: number) => n, { queue: 'jobs' })
    const one = await job.send(1)
    const batch = await broker.enqueueMany([
      job.message(2),
      { message: job.message(3), priority: 5 },
    ])
    await broker.enqueueMany([])

    expect(calls).toHaveLength(2)
    expect(calls[0]!.messages.map((m) => m.id)).toEqual([one.id])
    expect(calls[1]!.messages.map((m) => m.id)).toEqual(batch.map((m) => m.id))
    expect(calls[1]!.messages[1]!.priority).toBe(5)
    expect(calls.map((c) => c.transactional)).toEqual([false, false])
    expect(typeof calls[0]!.executor.query).toBe('function')
    expect(await messageCount()).toBe(3)
  })

  it('runs plugins outermost first, then broker middleware, around the write', async () => {
    const order: string[] = []
    const trace = (name: string): IddqueuePlugin => ({
      name,
      middleware: {
        async enqueue(_event, next) {
          order.push(`${name}:before`)
          await next()
          order.push(`${name}:after`)
        },
      },
    })
    const broker = db.broker({
      plugins: [trace('outer'), trace('inner')],
      middleware: [
        {
          async enqueue(_event, next) {
            order.push(`rows before: ${await messageCount()}`)
            await next()
          },
        },
      ],
    })
    await broker.actor('traced', () => 1).send()
    expect(order).toEqual([
      'outer:before',
      'inner:before',
      'rows before: 0',
      'inner:after',
      'outer:after',
    ])
  })

  it('writes nothing when a middleware throws before next()', async () => {
    const refused = new Error('refused by policy')
    const broker = db.broker({
      plugins: [
        {
          name: 'policy',
          middleware: {
            async enqueue(event, next) {
              if (event.messages.some((m) => m.args[0] === 'forbidden')) throw refused
              await next()
            },
          },
        },
      ],
    })
    const seen: string[] = []
    broker.on('message:enqueued', ({ message }) => seen.push(message.id))
    const act = broker.actor('act', (s: string) => s)
    await expect(act.send('forbidden')).rejects.toBe(refused)
    await expect(broker.enqueueMany([act.message('ok'), act.message('forbidden')])).rejects.toBe(
      refused,
    )
    expect(await messageCount()).toBe(0)
    expect(seen).toEqual([])
    expect(await wakeUps()).toEqual([])
    await act.send('ok')
    expect(await messageCount()).toBe(1)
  })

  it('writes nothing when a middleware throws after next()', async () => {
    // A middleware may check what the write did (or write rows of its own
    // through event.executor) and then refuse: the caller sees the error, so
    // the messages must not exist either.
    const refused = new Error('refused after the write')
    const broker = db.broker({
      plugins: [
        {
          name: 'audit',
          middleware: {
            async enqueue(_event, next) {
              await next()
              throw refused
            },
          },
        },
      ],
    })
    const act = broker.actor('act', (s: string) => s)
    await expect(act.send('x')).rejects.toBe(refused)
    await expect(broker.enqueueMany([act.message('y'), act.message('z')])).rejects.toBe(refused)
    expect(await messageCount()).toBe(0)
    expect(await wakeUps()).toEqual([])
  })

  it('commits rows the middleware writes through event.executor with the messages', async () => {
    await db.sql`create table if not exists public.enqueue_audit (message_id uuid primary key)`
    await db.sql`truncate public.enqueue_audit`
    let fail = false
    const broker = db.broker({
      plugins: [
        {
          name: 'audit',
          middleware: {
            async enqueue(event, next) {
              await next()
              for (const message of event.messages) {
                await event.executor.query(
                  'insert into public.enqueue_audit (message_id) values ($1)',
                  [message.id],
                )
              }
              if (fail) throw new Error('audit failed')
            },
          },
        },
      ],
    })
    const act = broker.actor('act', (n: number) => n)
    const kept = await act.send(1)
    fail = true
    await expect(act.send(2)).rejects.toThrow('audit failed')
    const audited = await db.sql`select message_id from public.enqueue_audit`
    expect(audited).toEqual([{ message_id: kept.id }])
    const rows = await db.sql`select id from iddqueue.messages`
    expect(rows).toEqual([{ id: kept.id }])
  })
})

describe('uniform batches', () => {
  it('store each message exactly as the general path does (options as objects, shared delay and priority)', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const job = broker.actor('uniform', (_i: number) => {}, { queue })
    const sent = await broker.enqueueMany(
      [1, 2, 3].map((i) => ({
        message: job.messageWithOptions({ args: [i], priority: 4, options: { tag: 'x' } }),
        delayMs: 1_000,
      })),
    )
    const rows = await db.sql`select id, args, options, priority, jsonb_typeof(options) as kind,
        extract(epoch from eta - enqueued_at) * 1000 as delay_ms
      from iddqueue.messages where queue = ${queue} order by id`
    expect(rows.map((r) => r.id)).toEqual(sent.map((m) => m.id))
    expect(rows.map((r) => [r.args, r.options, r.kind, r.priority])).toEqual([
      [[1], { tag: 'x' }, 'object', 4],
      [[2], { tag: 'x' }, 'object', 4],
      [[3], { tag: 'x' }, 'object', 4],
    ])
    for (const row of rows) expect(Number(row.delay_ms)).toBeCloseTo(1_000, -1)
  })
})
