import { describe, expect, it, vi } from 'vitest'
import {
  type ActorContext,
  type ActorOptions,
  currentMessage,
  type IddqueuePlugin,
  InvalidOptionError,
  type Logger,
  type Middleware,
} from '../src/index.js'
import { type AuditActorOptions, auditLog } from './fixtures/audit-log-plugin.js'
import { setupDatabase, sleep, uniqueQueue } from './helpers.js'

const db = setupDatabase()

/** Actor options with the plugin's key (a plugin package would merge it into ActorOptions). */
function audited(options: ActorOptions & AuditActorOptions): ActorOptions {
  return options
}

/** A logger that keeps the plugin's info lines and every warning and error. */
function captureLogger(lines: string[]): Logger {
  return {
    debug: () => {},
    info: (message) => {
      if (message.startsWith('audit-log:')) lines.push(message)
    },
    warn: (message) => lines.push(`warn: ${message}`),
    error: (message) => lines.push(`error: ${message}`),
  }
}

describe('a plugin (auditLog)', () => {
  it('has its migrations applied once by broker.migrate(), after core, in the ledger under its name', async () => {
    const schema = `plugin_${crypto.randomUUID().slice(0, 8)}`
    const broker = db.broker({ namespace: { schema }, plugins: [auditLog()] })
    const first = await broker.migrate()
    expect(first.applied.at(-1)).toEqual({
      owner: 'audit-log',
      version: 1,
      name: 'create-audit-log',
    })
    expect(first.applied.filter((m) => m.owner === 'audit-log')).toHaveLength(1)
    expect(first.applied[0]?.owner).toBe('@iddqueue/core')
    expect((await broker.migrate()).applied).toEqual([])
    // Another process with the same plugins finds nothing to do.
    const other = db.broker({ namespace: { schema }, plugins: [auditLog()] })
    expect((await other.migrate()).applied).toEqual([])

    const ledger = await db.sql.unsafe(
      `select owner, version, name from "${schema}".migrations where owner = 'audit-log'`,
    )
    expect(ledger).toEqual([{ owner: 'audit-log', version: 1, name: 'create-audit-log' }])
    const [table] = await db.sql`select to_regclass(${`"${schema}".audit_log`})::text as name`
    expect(table?.name).toBe(`${schema}.audit_log`)
  })

  it('owns the audit option: accepted only when the plugin is loaded', () => {
    const options = audited({ audit: true, maxRetries: 1 })
    const plain = db.broker()
    expect(() => plain.actor('charge', () => 1, options)).toThrow(
      /Unknown option "audit" for actor charge: .*a plugin may own it/,
    )
    const broker = db.broker({ plugins: [auditLog()] })
    const charge = broker.actor('charge', () => 1, options)
    expect(charge.options.audit).toBe(true)
    expect(charge.options.maxRetries).toBe(1)
  })

  it('checks the values of its options when an actor is declared: a refused actor is not registered', () => {
    const seen: string[] = []
    const checking: IddqueuePlugin = {
      name: 'checking',
      actorOptions: ['audit'],
      checkActor(actor) {
        seen.push(`${actor.name}:${actor.options.maxRetries}`)
        if (actor.options.audit !== undefined && typeof actor.options.audit !== 'boolean') {
          throw new InvalidOptionError(
            `Invalid option audit for actor ${actor.name}: expected a boolean`,
          )
        }
      },
    }
    const broker = db.broker({ plugins: [checking] })
    expect(() => broker.actor('charge', () => 1, audited({ audit: 'yes' as never }))).toThrow(
      InvalidOptionError,
    )
    expect(() => broker.actor('charge', () => 1, audited({ audit: 'yes' as never }))).toThrow(
      'Invalid option audit for actor charge: expected a boolean',
    )
    // Not registered: the name is free for a valid declaration.
    const charge = broker.actor('charge', () => 1, audited({ audit: true }))
    expect(charge.options.audit).toBe(true)
    // Every actor is checked, with core's defaults filled in.
    broker.actor('plain', () => 1)
    expect(seen).toEqual(['charge:20', 'charge:20', 'charge:20', 'plain:20'])
  })

  it('writes one audit row per attempt in the settle transaction, and skips actors without audit', async () => {
    const plugin = auditLog()
    const processHook = vi.spyOn(plugin.middleware!, 'process' as never)
    // Fails the first settle transaction that holds an audit row, after the
    // plugin's insert: the insert must roll back with the outcomes.
    let failed = false
    const failOnce: Middleware = {
      async settle(event) {
        if (failed || !event.settled.some((s) => s.message.actor === 'charge')) return
        failed = true
        throw new Error('settle failed once')
      },
    }
    const broker = db.broker({
      plugins: [plugin],
      middleware: [failOnce],
      logger: captureLogger([]),
    })
    await broker.migrate()
    const queue = uniqueQueue()
    const charge = broker.actor(
      'charge',
      (n: number, ctx: ActorContext) => {
        if (n % 3 === 0 && ctx.attempt === 1) throw new TypeError(`declined ${n}`)
        return n
      },
      audited({ queue, audit: true, maxRetries: 1, minBackoffMs: 10, maxBackoffMs: 20 }),
    )
    let plainCalls = 0
    const plain = broker.actor(
      'plain',
      () => {
        plainCalls++
      },
      { queue },
    )
    const messages = await broker.enqueueMany(
      Array.from({ length: 30 }, (_, n) => charge.message(n)),
    )
    await broker.enqueueMany(Array.from({ length: 10 }, () => plain.message()))

    // Audit rows and outcomes become visible together: one statement, one snapshot.
    const mismatches: unknown[] = []
    let watching = true
    const watcher = (async () => {
      while (watching) {
        const [row] = await db.sql`select
            (select count(*)::int from iddqueue.messages
              where queue = ${queue} and actor = 'charge' and state = 'done') as done,
            (select count(*)::int from iddqueue.audit_log
              where queue = ${queue} and state = 'done') as audited_done,
            (select coalesce(sum(retries), 0)::int from iddqueue.messages
              where queue = ${queue} and actor = 'charge') as retried,
            (select count(*)::int from iddqueue.audit_log
              where queue = ${queue} and state = 'queued') as audited_retried`
        if (row?.done !== row?.audited_done || row?.retried !== row?.audited_retried)
          mismatches.push(row)
        await sleep(2)
      }
    })()
    const worker = broker.worker({ concurrency: 4, pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 10_000 })
    await worker.stop()
    watching = false
    await watcher

    expect(failed).toBe(true)
    expect(mismatches).toEqual([])
    const rows = await db.sql`select message_id, actor, attempt, state, error_type, duration_ms
      from iddqueue.audit_log where queue = ${queue} order by message_id, attempt`
    // Ten messages failed once: 40 attempts, each recorded exactly once despite the rollback.
    expect(rows).toHaveLength(40)
    const expected = messages.flatMap((m, n) =>
      n % 3 === 0
        ? [
            {
              message_id: m.id,
              actor: 'charge',
              attempt: 1,
              state: 'queued',
              error_type: 'TypeError',
            },
            { message_id: m.id, actor: 'charge', attempt: 2, state: 'done', error_type: null },
          ]
        : [{ message_id: m.id, actor: 'charge', attempt: 1, state: 'done', error_type: null }],
    )
    expect(rows.map(({ duration_ms: _, ...row }) => row)).toEqual(expected)
    expect(rows.every((r) => typeof r.duration_ms === 'number' && r.duration_ms >= 0)).toBe(true)
    // forActor: the process hook never saw the plain actor's messages.
    expect(plainCalls).toBe(10)
    expect(processHook).toHaveBeenCalledTimes(40)
    const [{ n: plainRows } = { n: -1 }] =
      await db.sql`select count(*)::int as n from iddqueue.audit_log where actor = 'plain'`
    expect(plainRows).toBe(0)
  })

  it('runs the middleware of two plugins in list order, the first outermost, inside core middleware', async () => {
    const trace: string[] = []
    const tracer = (name: string): IddqueuePlugin => ({
      name,
      middleware: {
        async enqueue(_event, next) {
          trace.push(`${name}:enqueue:enter`)
          await next()
          trace.push(`${name}:enqueue:exit`)
        },
        async process(event, next) {
          // Core's middleware is outside: currentMessage() is already set.
          trace.push(`${name}:process:enter:${currentMessage()?.id === event.message.id}`)
          const outcome = await next()
          trace.push(`${name}:process:exit:${outcome.kind}`)
          return outcome
        },
        async settle() {
          trace.push(`${name}:settle`)
        },
      },
    })
    const broker = db.broker({ plugins: [tracer('first'), tracer('second')], currentMessage: true })
    const queue = uniqueQueue()
    const traced = broker.actor(
      'traced',
      () => {
        trace.push('handler')
      },
      { queue },
    )
    await traced.send()
    expect(trace).toEqual([
      'first:enqueue:enter',
      'second:enqueue:enter',
      'second:enqueue:exit',
      'first:enqueue:exit',
    ])
    trace.length = 0
    const worker = broker.worker()
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(trace).toEqual([
      'first:process:enter:true',
      'second:process:enter:true',
      'handler',
      'second:process:exit:success',
      'first:process:exit:success',
      'first:settle',
      'second:settle',
    ])
  })

  it('skips a settle hook for batches of successes of actors its forActor leaves alone', async () => {
    const settled: string[][] = []
    const watcher: Middleware = {
      forActor: (actor) => actor.name === 'watched',
      async settle(event) {
        settled.push(event.settled.map((s) => `${s.message.actor}:${s.state}`))
      },
    }
    const broker = db.broker({ middleware: [watcher] })
    const queue = uniqueQueue()
    const other = broker.actor(
      'other',
      (fail: boolean) => {
        if (fail) throw new Error('no')
      },
      { queue, maxRetries: 0 },
    )
    const watched = broker.actor('watched', () => {}, { queue })
    const run = async () => {
      const worker = broker.worker({ queues: [queue] })
      await worker.start()
      await broker.join({ queues: [queue], timeoutMs: 5_000 })
      await worker.stop()
    }
    await broker.enqueueMany([other.message(false), other.message(false)])
    await run()
    expect(settled).toEqual([])
    await other.send(true)
    await run()
    expect(settled).toEqual([['other:rejected']])
    settled.length = 0
    await watched.send()
    await run()
    expect(settled).toEqual([['watched:done']])
  })

  it('runs setup once, before the first operation, and its teardown on close after the workers stop', async () => {
    const lines: string[] = []
    const plugin = auditLog()
    const setup = vi.spyOn(plugin, 'setup' as never)
    const enqueueMarker: Middleware = {
      async enqueue(_event, next) {
        lines.push('enqueue')
        await next()
      },
    }
    const broker = db.broker({
      plugins: [plugin],
      middleware: [enqueueMarker],
      logger: captureLogger(lines),
    })
    broker.on('worker:stopped', () => lines.push('event worker:stopped'))
    await broker.migrate()
    const queue = uniqueQueue()
    const charge = broker.actor('charge', () => 1, audited({ queue, audit: true }))
    expect(setup).not.toHaveBeenCalled()

    // Concurrent first operations share one setup.
    const worker = broker.worker()
    await Promise.all([charge.send(), charge.send(), worker.start()])
    await charge.send()
    await broker.join({ timeoutMs: 5_000 })
    expect(setup).toHaveBeenCalledTimes(1)
    expect(lines).toEqual(['audit-log: ready', 'enqueue', 'enqueue', 'enqueue'])

    await broker.close()
    await broker.close()
    expect(lines.slice(4)).toEqual(['event worker:stopped', 'audit-log: stopped'])
    expect(setup).toHaveBeenCalledTimes(1)
  })
})
