import {
  type ActorContext,
  IddqueueError,
  InvalidOptionError,
  PayloadTooLargeError,
} from '@iddqueue/core'
import { beforeEach, describe, expect, it } from 'vitest'
import {
  createScheduler,
  DEDUP_PREFIX,
  ScheduleExistsError,
  ScheduleNotFoundError,
  scheduledOccurrence,
  scheduler,
} from '../src/index.js'
import {
  drain,
  rejection,
  rewind,
  scheduledMessages,
  setupDatabase,
  uniqueQueue,
  until,
} from './helpers.js'

const db = setupDatabase()
// Ticks take every due schedule of the database: each test starts with none.
beforeEach(async () => {
  await db.sql`delete from iddqueue.schedules`
})
const unique = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}`

async function scheduleCount() {
  const [row] = await db.sql`select count(*)::int as n from iddqueue.schedules`
  return row!.n as number
}

describe('create, list, update, enable, disable, delete', () => {
  it('creates a schedule that is due at once, publishes one message per occurrence with its intended time', async () => {
    const broker = db.broker()
    const schedules = createScheduler(broker)
    const name = unique('reports')
    const queue = uniqueQueue('reports')
    const info = await schedules.create({
      name,
      actor: 'generate_report',
      queue,
      everyMs: 60_000,
      args: [{ account: 42 }],
    })
    expect(info).toMatchObject({
      name,
      queue,
      everyMs: 60_000,
      enabled: true,
      source: 'api',
      catchUp: 'latest',
    })
    const tick = await schedules.tick()
    expect(tick.published).toHaveLength(1)
    const [occurrence] = tick.published
    expect(occurrence!.intendedAt.getTime()).toBe(info.nextRunAt!.getTime())
    expect(await schedules.tick()).toMatchObject({ schedules: 0, published: [] })

    const messages = await scheduledMessages(db.sql, name)
    expect(messages).toEqual([
      {
        id: occurrence!.messageId,
        queue,
        actor: 'generate_report',
        args: [{ account: 42 }],
        state: 'queued',
        intendedAt: occurrence!.intendedAt.toISOString(),
      },
    ])
    const [key] =
      await db.sql`select key from iddqueue.deduplication where message_id = ${occurrence!.messageId}::uuid`
    expect(key?.key).toBe(`${DEDUP_PREFIX}${name}:${occurrence!.intendedAt.toISOString()}`)
    const after = await schedules.get(name)
    expect(after!.nextRunAt!.getTime()).toBe(info.nextRunAt!.getTime() + 60_000)
    expect(after!.lastMessageId).toBe(occurrence!.messageId)
  })

  it('exposes the intended time to the handler through ctx.message, and a paused queue still receives occurrences', async () => {
    const broker = db.broker()
    const schedules = createScheduler(broker)
    const queue = uniqueQueue('paused')
    const seen: (Date | undefined)[] = []
    broker.actor(
      'report',
      (_: number, ctx: ActorContext) => {
        seen.push(scheduledOccurrence(ctx.message)?.intendedAt)
      },
      { queue },
    )
    await broker.pause(queue)
    const name = unique('paused')
    await schedules.create({ name, actor: 'report', everyMs: 3_600_000, args: [1] })
    const { published } = await schedules.tick()
    expect(published).toHaveLength(1)
    expect((await scheduledMessages(db.sql, name))[0]).toMatchObject({ queue, state: 'queued' })
    await broker.resume(queue)
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await worker.stop()
    expect(seen).toEqual([published[0]!.intendedAt])
  })

  it('refuses a duplicate name on create and changes nothing', async () => {
    const schedules = createScheduler(db.broker())
    const name = unique('dup')
    await schedules.create({ name, actor: 'a', everyMs: 1_000 })
    const before = await schedules.get(name)
    const error = await rejection(schedules.create({ name, actor: 'b', everyMs: 5_000 }))
    expect(ScheduleExistsError.isInstance(error)).toBe(true)
    expect((error as Error).message).toContain(name)
    expect(await schedules.get(name)).toEqual(before)
  })

  it('refuses bad input with typed errors naming the value, storing nothing', async () => {
    const schedules = createScheduler(db.broker())
    const before = await scheduleCount()
    const cases: [Record<string, unknown>, string][] = [
      [{ cron: 'every tuesday' }, 'every tuesday'],
      [{ cron: '0 3 * * *', timezone: 'Europe/Atlantis' }, 'Europe/Atlantis'],
      [{ everyMs: 0 }, 'everyMs 0'],
      [{ everyMs: -1 }, 'everyMs -1'],
      [{ everyMs: Number.NaN }, 'everyMs NaN'],
      [{ everyMs: 1_000, startAt: '2026-06-01T00:00:00Z', endAt: '2026-05-01T00:00:00Z' }, 'endAt'],
      [{ everyMs: 1_000, queue: 'no spaces allowed' }, 'no spaces allowed'],
      [{ everyMs: 1_000, args: ['x'.repeat(2 * 1024 * 1024)] }, 'bytes'],
    ]
    for (const [fields, named] of cases) {
      const error = await rejection(
        schedules.create({ name: unique('bad'), actor: 'a', ...fields } as never),
      )
      expect(IddqueueError.isInstance(error), named).toBe(true)
      expect((error as Error).message).toContain(named)
    }
    expect(
      PayloadTooLargeError.isInstance(
        await rejection(
          schedules.create({
            name: unique('big'),
            actor: 'a',
            everyMs: 1,
            args: ['x'.repeat(2 * 1024 * 1024)],
          }),
        ),
      ),
    ).toBe(true)
    const bad = await rejection(
      schedules.define([
        { name: unique('ok'), actor: 'a', everyMs: 1_000 },
        { name: unique('bad'), actor: 'a', everyMs: -1 },
      ]),
    )
    expect(InvalidOptionError.isInstance(bad)).toBe(true)
    expect(await scheduleCount()).toBe(before)
  })

  it('names any value in its refusals, a bigint or an object without a prototype, storing nothing', async () => {
    const broker = db.broker()
    const schedules = createScheduler(broker)
    const name = unique('any')
    await schedules.create({ name, actor: 'a', everyMs: 60_000 })
    const before = await scheduleCount()
    const bare = Object.create(null)
    const cases: [() => unknown, string][] = [
      [
        () => createScheduler(broker, { maxPayloadBytes: 1n as never }),
        'Invalid maxPayloadBytes 1n: expected a positive integer',
      ],
      [
        () => schedules.define([], { prune: bare }),
        'Invalid prune an object: expected true or false',
      ],
      [
        () => schedules.nextRuns(name, 3n as never),
        'Invalid count 3n: expected an integer from 1 to 1000',
      ],
      [
        () => schedules.tick({ limit: bare }),
        'Invalid limit an object: expected a positive integer',
      ],
      [
        () => schedules.start({ safetyPollMs: 1n as never }),
        'Invalid safetyPollMs 1n: expected a positive integer of milliseconds',
      ],
      [
        () => schedules.update(name, { everyMs: 2n as never }),
        `Schedule "${name}": invalid everyMs 2n: expected a positive integer of milliseconds`,
      ],
      [
        () => schedules.update(1n as never, { everyMs: 1_000 }),
        'Invalid schedule name 1n: expected 1 to 128 characters without control characters',
      ],
      [
        () =>
          schedules.create({
            name: unique('any'),
            actor: 'a',
            everyMs: 1_000,
            catchUp: { max: 1n as never },
          }),
        "invalid catchUp an object: expected 'latest' or { max: 1..1000, withinMs?: a positive integer }",
      ],
    ]
    for (const [run, text] of cases) {
      const error = await rejection((async () => run())())
      expect(InvalidOptionError.isInstance(error), `${text}: ${String(error)}`).toBe(true)
      expect((error as Error).message.endsWith(text), (error as Error).message).toBe(true)
    }
    expect(await scheduleCount()).toBe(before)
  })

  it('refuses bad options objects and loop options at once, not when a worker starts', async () => {
    const broker = db.broker()
    const schedules = createScheduler(broker)
    const cases: [() => unknown, string][] = [
      [
        () => createScheduler(broker, null as never),
        'Invalid createScheduler() options null: expected an object',
      ],
      [
        () => schedules.define([], 'all' as never),
        'Invalid define() options "all": expected an object',
      ],
      [() => schedules.tick('x' as never), 'Invalid tick() options "x": expected an object'],
      [() => schedules.start({ onTick: 1 as never }), 'Invalid onTick 1: expected a function'],
      [() => schedules.start(null as never), 'Invalid start() options null: expected an object'],
      [() => scheduler(null as never), 'Invalid scheduler() options null: expected an object'],
      [
        () => scheduler({ runInWorkers: 'yes' as never }),
        'Invalid runInWorkers "yes": expected true, false or the loop\'s options',
      ],
      // Checked only inside the first worker:started listener, where the refusal was lost.
      [
        () => scheduler({ runInWorkers: { safetyPollMs: 0 } }),
        'Invalid safetyPollMs 0: expected a positive integer of milliseconds',
      ],
    ]
    for (const [run, text] of cases) {
      const error = await rejection((async () => run())())
      expect(InvalidOptionError.isInstance(error), `${text}: ${String(error)}`).toBe(true)
      expect((error as Error).message).toBe(text)
    }
  })

  it('updates, disables, enables and deletes; nextRuns follows the stored timing', async () => {
    const schedules = createScheduler(db.broker())
    const name = unique('cron')
    await schedules.create({ name, actor: 'a', cron: '0 3 * * *', timezone: 'Europe/Paris' })
    const daily = await schedules.nextRuns(name, 3)
    expect(daily).toHaveLength(3)
    expect(daily[1]!.getTime() - daily[0]!.getTime()).toBeGreaterThanOrEqual(23 * 3_600_000)
    // Update of a cron takes effect at the new expression's next occurrence.
    const updated = await schedules.update(name, { cron: '*/5 * * * *', timezone: 'UTC' })
    expect(updated.cron).toBe('*/5 * * * *')
    expect(updated.nextRunAt!.getTime() % 300_000).toBe(0)
    expect(updated.nextRunAt!.getTime() - Date.now()).toBeLessThanOrEqual(300_000 + 60_000)
    const runs = await schedules.nextRuns(name, 2)
    expect(runs[1]!.getTime() - runs[0]!.getTime()).toBe(300_000)

    await schedules.disable(name)
    expect((await schedules.get(name))!.enabled).toBe(false)
    await rewind(db.sql, name, 3_600_000)
    expect((await schedules.tick()).published.filter((o) => o.schedule === name)).toEqual([])
    await schedules.enable(name)
    const enabled = await schedules.get(name)
    expect(enabled!.enabled).toBe(true)
    expect(enabled!.nextRunAt!.getTime()).toBeGreaterThan(Date.now() - 60_000) // the off time is not caught up

    expect(await schedules.delete(name)).toBe(true)
    expect(await schedules.delete(name)).toBe(false)
    expect(ScheduleNotFoundError.isInstance(await rejection(schedules.enable(name)))).toBe(true)
    expect(
      ScheduleNotFoundError.isInstance(await rejection(schedules.update(name, { everyMs: 5 }))),
    ).toBe(true)
  })
})

describe('define', () => {
  it('is idempotent, applies changes, and prunes only what define wrote', async () => {
    const schedules = createScheduler(db.broker())
    const a = unique('a')
    const b = unique('b')
    const manual = unique('manual')
    await schedules.create({ name: manual, actor: 'm', everyMs: 1_000 })
    const first = await schedules.define([
      { name: a, actor: 'x', everyMs: 60_000 },
      { name: b, actor: 'y', cron: '0 * * * *' },
    ])
    expect([...first.created].sort()).toEqual([a, b].sort())
    const rowA = await schedules.get(a)
    const again = await schedules.define([
      { name: a, actor: 'x', everyMs: 60_000 },
      { name: b, actor: 'y', cron: '0 * * * *' },
    ])
    expect(again).toMatchObject({ created: [], updated: [] })
    expect(await schedules.get(a)).toEqual(rowA)

    const changed = await schedules.define([{ name: a, actor: 'x', everyMs: 60_000, args: [2] }], {
      prune: true,
    })
    expect(changed).toMatchObject({ created: [], updated: [a], pruned: [b] })
    const newA = await schedules.get(a)
    expect(newA!.args).toEqual([2])
    expect(newA!.nextRunAt).toEqual(rowA!.nextRunAt) // a new template keeps the timing
    expect(await schedules.get(b)).toBeUndefined()
    expect(await schedules.get(manual)).toBeDefined()
  })
})

describe('catch-up and overlap', () => {
  // An outage without waiting for one: the schedule's grid starts a minute
  // ago and no scheduler has ticked since, as after a one-minute outage.
  it('coalesces a one-minute outage into one message, for the latest missed occurrence', async () => {
    const schedules = createScheduler(db.broker())
    const name = unique('coalesce')
    const startAt = Date.now() - 60_500
    await schedules.create({ name, actor: 'a', everyMs: 1_000, startAt })
    // One take of the schedule: a tick longer than a second (a loaded
    // machine) would take it again for the next occurrence, due by then.
    const { published } = await schedules.tick({ limit: 1 })
    expect(published).toHaveLength(1)
    const info = await schedules.get(name)
    const intended = published[0]!.intendedAt.getTime()
    expect((intended - startAt) % 1_000).toBe(0)
    expect(intended).toBeGreaterThanOrEqual(startAt + 60_000)
    expect(info!.nextRunAt!.getTime()).toBe(intended + 1_000)
    expect(await scheduledMessages(db.sql, name)).toHaveLength(1)
  })

  it('backfills with { max: 5 }: five messages, in order, each with its intended time', async () => {
    const schedules = createScheduler(db.broker())
    const name = unique('backfill')
    const startAt = Date.now() - 60_500
    await schedules.create({ name, actor: 'a', everyMs: 1_000, startAt, catchUp: { max: 5 } })
    const { published } = await schedules.tick({ limit: 1 })
    expect(published).toHaveLength(5)
    const times = published.map((o) => o.intendedAt.getTime())
    expect(times.slice(1).map((t, i) => t - times[i]!)).toEqual([1_000, 1_000, 1_000, 1_000])
    expect((await schedules.get(name))!.nextRunAt!.getTime()).toBe(times[4]! + 1_000)
    const messages = await scheduledMessages(db.sql, name)
    expect(messages.map((m) => m.intendedAt)).toEqual(
      published.map((o) => o.intendedAt.toISOString()),
    )
    expect(new Set(messages.map((m) => m.id)).size).toBe(5)
  })

  it("overlap: 'skip' publishes nothing while the previous occurrence's message runs", async () => {
    const broker = db.broker()
    const schedules = createScheduler(broker)
    const queue = uniqueQueue('overlap')
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    let started = 0
    broker.actor(
      'slow',
      async () => {
        started += 1
        await gate
      },
      { queue },
    )
    const name = unique('overlap')
    await schedules.create({ name, actor: 'slow', queue, everyMs: 500, overlap: 'skip' })
    expect((await schedules.tick()).published).toHaveLength(1)
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 50 })
    await worker.start()
    await until(() => started === 1, 20_000, 'the slow handler to start')
    // The next occurrences come due while the handler runs: each is skipped.
    let skipped = 0
    await until(
      async () => {
        const tick = await schedules.tick()
        expect(tick.published).toHaveLength(0)
        skipped += tick.skipped.length
        return skipped >= 1
      },
      20_000,
      'an occurrence to come due while the handler runs',
    )
    release()
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await until(
      async () => (await schedules.tick()).published.length > 0,
      20_000,
      'the next occurrence after the handler finished',
    )
    await worker.stop()
    expect(await scheduledMessages(db.sql, name)).toHaveLength(2)
  })
})

describe('disable during a tick', () => {
  it('waits for the in-flight tick, then stops future runs; queued messages stay', async () => {
    let entered!: () => void
    const inTick = new Promise<void>((resolve) => {
      entered = resolve
    })
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    let hold = true
    const broker = db.broker({
      middleware: [
        {
          async enqueue(_event, next) {
            await next()
            if (hold) {
              entered()
              await gate
            }
          },
        },
      ],
    })
    const schedules = createScheduler(broker)
    const name = unique('disable')
    await schedules.create({ name, actor: 'a', everyMs: 1_000 })
    const ticking = schedules.tick()
    await inTick
    let disabled = false
    const disabling = schedules.disable(name).then(() => {
      disabled = true
    })
    // The disable is blocked on the row lock the tick holds.
    await until(
      async () => {
        const rows = await db.sql`select 1 from pg_stat_activity where datname = current_database()
        and wait_event_type = 'Lock' and query like '%for update%'`
        return rows.length > 0
      },
      20_000,
      'disable() to wait for the tick',
    )
    expect(disabled).toBe(false)
    release()
    hold = false
    expect((await ticking).published).toHaveLength(1)
    await disabling
    await rewind(db.sql, name, 10_000)
    expect((await schedules.tick()).published).toHaveLength(0)
    const messages = await scheduledMessages(db.sql, name)
    expect(messages).toHaveLength(1)
    expect(messages[0]!.state).toBe('queued')
  })
})

describe('tick({ limit })', () => {
  it('handles at most `limit` due schedules, oldest next run first; the next tick handles the rest', async () => {
    const schedules = createScheduler(db.broker())
    // Three schedules due at once, at known and distinct next runs (their
    // startAt, a few seconds ago, within their hour-long interval).
    const base = Date.now() - 10_000
    const [a, b, c] = [unique('limit-a'), unique('limit-b'), unique('limit-c')]
    for (const [name, startAt] of [
      [a, base],
      [b, base + 1_000],
      [c, base + 2_000],
    ] as const) {
      await schedules.create({ name, actor: 'a', everyMs: 3_600_000, startAt })
    }

    const first = await schedules.tick({ limit: 2 })
    expect(first.schedules).toBe(2)
    expect(first.published.map((o) => [o.schedule, o.intendedAt.getTime()])).toEqual([
      [a, base],
      [b, base + 1_000],
    ])
    // The third is still due and has published nothing.
    expect((await schedules.get(c))!.nextRunAt!.getTime()).toBe(base + 2_000)
    expect(await scheduledMessages(db.sql, c)).toEqual([])

    const second = await schedules.tick({ limit: 2 })
    expect(second.schedules).toBe(1)
    expect(second.published.map((o) => [o.schedule, o.intendedAt.getTime()])).toEqual([
      [c, base + 2_000],
    ])
    expect(await schedules.tick({ limit: 2 })).toMatchObject({ schedules: 0, published: [] })
    for (const [name, startAt] of [
      [a, base],
      [b, base + 1_000],
      [c, base + 2_000],
    ] as const) {
      expect((await scheduledMessages(db.sql, name)).map((m) => m.intendedAt)).toEqual([
        new Date(startAt).toISOString(),
      ])
    }
  })
})

describe('delete, then create the same name', () => {
  // pg-boss ran a job twice after unschedule + schedule. Here a re-created
  // interval schedule with the same startAt is due again at once and
  // coalesces to the occurrence already published and run: the deterministic
  // message id and the dedup key keep it at one message, which runs once.
  it('stores and runs one message for the occurrence published before the delete', async () => {
    const broker = db.broker()
    const schedules = createScheduler(broker)
    const queue = uniqueQueue('recreate')
    const runs: (Date | undefined)[] = []
    broker.actor(
      'recreated',
      (_: null, ctx: ActorContext) => {
        runs.push(scheduledOccurrence(ctx.message)?.intendedAt)
      },
      { queue },
    )
    const name = unique('recreate')
    const startAt = Date.now() - 1_800_000
    const definition = { name, actor: 'recreated', everyMs: 3_600_000, startAt, args: [null] }

    await schedules.create(definition)
    const before = await schedules.tick()
    expect(before.published.map((o) => o.intendedAt.getTime())).toEqual([startAt])
    await drain(broker, [queue])
    expect(runs).toEqual([new Date(startAt)])

    expect(await schedules.delete(name)).toBe(true)
    const recreated = await schedules.create(definition)
    expect(recreated.nextRunAt!.getTime()).toBe(startAt) // due again, for the same occurrence
    const after = await schedules.tick()
    expect(after.published).toEqual(before.published) // same intended time, same message id
    await drain(broker, [queue])

    expect(runs).toEqual([new Date(startAt)])
    expect(await scheduledMessages(db.sql, name)).toEqual([
      {
        id: before.published[0]!.messageId,
        queue,
        actor: 'recreated',
        args: [null],
        state: 'done',
        intendedAt: new Date(startAt).toISOString(),
      },
    ])
    const keys = await db.sql`select key from iddqueue.deduplication
      where key like ${`${DEDUP_PREFIX}${name}:%`}`
    expect(keys.map((row) => row.key)).toEqual([
      `${DEDUP_PREFIX}${name}:${new Date(startAt).toISOString()}`,
    ])
    // The next occurrence is still on the grid, an interval later.
    expect((await schedules.get(name))!.nextRunAt!.getTime()).toBe(startAt + 3_600_000)
  })
})

describe('the ends of time', () => {
  const MAX_DATE_MS = 8.64e15

  it('refuses a cron start croner cannot compute from, and a start PostgreSQL cannot store', async () => {
    const schedules = createScheduler(db.broker())
    for (const definition of [
      // croner threw a plain RangeError from create().
      { name: unique('late'), actor: 'a', cron: '* * * * *', startAt: MAX_DATE_MS - 1_000 },
      // PostgreSQL refused it in the INSERT: "timestamp out of range".
      { name: unique('early'), actor: 'a', everyMs: 1_000, startAt: -210_866_803_200_001 },
    ]) {
      const error = await rejection(schedules.create(definition))
      expect(InvalidOptionError.isInstance(error), String(error)).toBe(true)
      expect((error as Error).message).toContain('invalid startAt')
    }
    expect(await scheduleCount()).toBe(0)
  })

  it('ends an interval schedule whose next occurrence would pass the latest Date', async () => {
    const schedules = createScheduler(db.broker())
    const name = unique('long')
    await schedules.create({
      name,
      actor: 'a',
      everyMs: Number.MAX_SAFE_INTEGER,
      startAt: Date.now() - 1_000,
    })
    const tick = await schedules.tick()
    expect(tick.failed).toEqual([])
    expect(tick.published).toHaveLength(1)
    // It stored a next run past the latest Date, read back as an Invalid Date.
    expect((await schedules.get(name))!.nextRunAt).toBeNull()
    const late = unique('late')
    await schedules.create({ name: late, actor: 'a', everyMs: 1e14, startAt: 8.6e15 })
    expect((await schedules.nextRuns(late, 3)).map((d) => d.getTime())).toEqual([8.6e15])
  })
})
