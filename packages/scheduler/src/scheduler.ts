import {
  type Broker,
  DEFAULT_MAX_PAYLOAD_BYTES,
  type EnqueueEntry,
  InvalidOptionError,
} from '@iddqueue/core'
import { describeValue, type Executor } from '@iddqueue/schema'
import {
  assertScheduleName,
  type ResolvedSchedule,
  resolveDefinition,
  type TemplateDefaults,
  timingOf,
} from './definition/resolve-definition.js'
import type { ScheduleDefinition } from './definition/schedule-definition.js'
import { ScheduleExistsError, ScheduleNotFoundError } from './errors.js'
import { occurrenceOptions } from './occurrence.js'
import { DEDUP_TTL_MS, occurrenceId, occurrenceKey } from './occurrence-id.js'
import { definitionOf, type ScheduleInfo, scheduleInfo } from './schedule-info.js'
import { hostOf, type SchedulerHost } from './scheduler-host.js'
import {
  type RunningScheduler,
  SchedulerLoop,
  type StartSchedulerOptions,
} from './scheduler-loop.js'
import type { ScheduleRow } from './sql/statements.js'
import { firstRun, planTick, resumeRun, upcomingRuns } from './timing/plan-tick.js'

/**
 * Options of {@link createScheduler}.
 *
 * @example
 * const schedules = createScheduler(broker, { maxPayloadBytes: 64 * 1024 })
 */
export interface SchedulerOptions {
  /** The largest template arguments accepted, as JSON bytes. Default 1 MiB, as the broker's. */
  readonly maxPayloadBytes?: number
}

/**
 * Options of {@link Scheduler.define}.
 *
 * @example
 * await schedules.define(definitions, { prune: true })
 */
export interface DefineOptions {
  /** Delete schedules an earlier `define()` wrote that are not in this list. Default `false`. */
  readonly prune?: boolean
}

/**
 * What {@link Scheduler.define} did, by schedule name.
 *
 * @example
 * const { created, updated, unchanged, pruned }: DefineResult = await schedules.define(definitions)
 */
export interface DefineResult {
  readonly created: readonly string[]
  readonly updated: readonly string[]
  readonly unchanged: readonly string[]
  readonly pruned: readonly string[]
}

/**
 * Changes for {@link Scheduler.update}: any field of a definition but its
 * name. Giving `everyMs` turns a cron schedule into an interval one, and
 * `cron` the reverse.
 *
 * @example
 * const change: ScheduleChanges = { cron: '30 6 * * 1-5', timezone: 'America/New_York' }
 */
export type ScheduleChanges = Partial<Omit<ScheduleDefinition, 'name'>>

/**
 * Options of {@link Scheduler.tick}.
 *
 * @example
 * await schedules.tick({ limit: 10 })
 */
export interface TickOptions {
  /** The most schedules handled in this tick. Default 100. */
  readonly limit?: number
}

/**
 * One occurrence a tick handled.
 *
 * @example
 * const { published } = await schedules.tick()
 * for (const o of published) console.log(o.schedule, o.intendedAt.toISOString(), o.messageId)
 */
export interface TickOccurrence {
  readonly schedule: string
  /** When the occurrence was due. */
  readonly intendedAt: Date
  /** Its deterministic message id. */
  readonly messageId: string
}

/**
 * What {@link Scheduler.tick} did.
 *
 * @example
 * const result: TickResult = await schedules.tick()
 * if (result.failed.length > 0) console.error(result.failed)
 */
export interface TickResult {
  /** Due schedules taken (published, skipped or failed). */
  readonly schedules: number
  /** Occurrences published (each exactly once across scheduler processes). */
  readonly published: readonly TickOccurrence[]
  /** Occurrences not published because of `overlap: 'skip'`. */
  readonly skipped: readonly TickOccurrence[]
  /** Schedules whose transaction failed: they stay due and are tried again. */
  readonly failed: readonly { readonly schedule: string; readonly error: unknown }[]
}

/**
 * Manages the schedules of a broker's namespace and publishes their due
 * occurrences. Made by {@link createScheduler}.
 *
 * @example
 * const schedules = createScheduler(broker)
 * await schedules.create({ name: 'cleanup', actor: 'cleanup', everyMs: 3_600_000 })
 * console.log(await schedules.nextRuns('cleanup', 3))
 * const running = schedules.start() // or startScheduler({ broker })
 */
export interface Scheduler {
  /**
   * Declares schedules in code: upserts every definition, idempotently.
   * An unchanged definition writes nothing; a changed one (template,
   * timing, catch-up, ...) takes effect from its next occurrence. Many
   * processes may call it at once with the same list: no duplicate, no
   * lost run. With `prune`, schedules an earlier `define()` wrote that are
   * not listed are deleted (those made by `create()` never are).
   *
   * @example
   * await schedules.define(
   *   [
   *     { name: 'nightly-report', actor: 'generate_report', cron: '0 3 * * *', timezone: 'Europe/Paris' },
   *     { name: 'heartbeat', actor: 'ping', everyMs: 30_000, overlap: 'skip' },
   *   ],
   *   { prune: true },
   * )
   */
  define(definitions: readonly ScheduleDefinition[], options?: DefineOptions): Promise<DefineResult>
  /**
   * Creates one schedule; throws `ScheduleExistsError` when the name is taken.
   *
   * @example
   * await schedules.create({ name: 'reports', actor: 'generate_report', queue: 'reports', everyMs: 60_000, args: [{ account: 42 }] })
   */
  create(definition: ScheduleDefinition): Promise<ScheduleInfo>
  /**
   * Changes a schedule. A new timing takes effect at its first occurrence
   * from now; a new template at the next occurrence. Throws
   * `ScheduleNotFoundError`.
   *
   * @example
   * await schedules.update('reports', { cron: '*\/5 * * * *', timezone: 'UTC' })
   */
  update(name: string, changes: ScheduleChanges): Promise<ScheduleInfo>
  /**
   * Enables a schedule; it resumes at its first occurrence from now (the
   * time it was off is not caught up).
   *
   * @example
   * await schedules.enable('reports')
   */
  enable(name: string): Promise<void>
  /**
   * Disables a schedule: waits for a tick that is publishing it, then no
   * further occurrence is published. Messages already queued stay.
   *
   * @example
   * await schedules.disable('reports')
   */
  disable(name: string): Promise<void>
  /**
   * Deletes a schedule; false when there was none. Queued messages stay.
   *
   * @example
   * await schedules.delete('reports')
   */
  delete(name: string): Promise<boolean>
  /**
   * One schedule, or undefined.
   *
   * @example
   * const info = await schedules.get('reports')
   */
  get(name: string): Promise<ScheduleInfo | undefined>
  /**
   * Every schedule of the namespace, by name.
   *
   * @example
   * for (const s of await schedules.list()) console.log(s.name, s.nextRunAt)
   */
  list(): Promise<ScheduleInfo[]>
  /**
   * The next `count` occurrences of a schedule from its stored next run
   * (fewer when it ends). Throws `ScheduleNotFoundError`.
   *
   * @example
   * const runs = await schedules.nextRuns('nightly-report', 5) // five Dates
   */
  nextRuns(name: string, count: number): Promise<Date[]>
  /**
   * Publishes every due occurrence once: each due schedule is locked
   * (`FOR UPDATE SKIP LOCKED`, so concurrent ticks share the work), its
   * message(s) sent and its next run advanced in one transaction.
   *
   * @example
   * const { published } = await schedules.tick({ limit: 100 })
   */
  tick(options?: TickOptions): Promise<TickResult>
  /**
   * Runs the scheduler loop in this process until `stop()`: it sleeps until
   * the earliest next run (PostgreSQL's clock) and wakes when schedules change.
   *
   * @example
   * const running = schedules.start()
   * running.stopOnSignals() // SIGTERM/SIGINT finish the current tick, then stop
   */
  start(options?: Omit<StartSchedulerOptions, 'broker'>): RunningScheduler
}

interface Stored {
  readonly resolved: ResolvedSchedule
  readonly anchorMs: number
  readonly nextRunMs: number | null
}

const timingKey = (
  s: Pick<ResolvedSchedule, 'everyMs' | 'cron' | 'timezone' | 'startAtMs' | 'endAtMs'>,
) => JSON.stringify([s.everyMs, s.cron, s.timezone, s.startAtMs, s.endAtMs])

const rowTiming = (row: ScheduleRow) => ({
  everyMs: row.every_ms,
  cron: row.cron,
  timezone: row.timezone,
  startAtMs: row.start_at_ms,
  endAtMs: row.end_at_ms,
})

class SchedulerApi implements Scheduler {
  readonly #broker: Broker
  readonly #maxPayloadBytes: number
  readonly #defaults: TemplateDefaults

  constructor(broker: Broker, options: SchedulerOptions) {
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionError(
        `Invalid createScheduler() options ${describeValue(options)}: expected an object`,
      )
    this.#broker = broker
    this.#maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES
    if (!Number.isSafeInteger(this.#maxPayloadBytes) || this.#maxPayloadBytes < 1) {
      throw new InvalidOptionError(
        `Invalid maxPayloadBytes ${describeValue(options.maxPayloadBytes)}: expected a positive integer`,
      )
    }
    // The actor's declared queue and priority when this process declares it.
    this.#defaults = (actor) => {
      const message = broker.message(actor, [])
      return { queue: message.queue, priority: message.priority }
    }
  }

  async #host(): Promise<SchedulerHost> {
    await this.#broker.ready()
    const host = hostOf(this.#broker)
    if (!host) {
      throw new InvalidOptionError(
        'The broker has no scheduler plugin: createBroker({ plugins: [scheduler()] }) from @iddqueue/scheduler',
      )
    }
    return host
  }

  #resolve(definition: ScheduleDefinition): ResolvedSchedule {
    return resolveDefinition(definition, this.#defaults, this.#maxPayloadBytes)
  }

  async #now(executor: Executor, host: SchedulerHost): Promise<number> {
    const [row] = await executor.query<{ now_ms: number }>(host.statements.now)
    return row!.now_ms
  }

  async #write(
    tx: Executor,
    host: SchedulerHost,
    statement: string,
    stored: Stored,
    source: 'code' | 'api',
  ): Promise<boolean> {
    const r = stored.resolved
    const rows = await tx.query(statement, [
      r.name,
      r.actor,
      r.queue,
      r.argsJson,
      r.priority,
      r.everyMs,
      r.cron,
      r.timezone,
      r.startAtMs,
      r.endAtMs,
      stored.anchorMs,
      JSON.stringify(r.catchUp),
      r.overlap,
      r.enabled,
      stored.nextRunMs,
      source,
      r.hash,
      host.statements.channel,
    ])
    return rows.length > 0
  }

  async define(
    definitions: readonly ScheduleDefinition[],
    options: DefineOptions = {},
  ): Promise<DefineResult> {
    if (!Array.isArray(definitions)) {
      throw new InvalidOptionError('Invalid schedules: expected an array of definitions')
    }
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionError(
        `Invalid define() options ${describeValue(options)}: expected an object`,
      )
    if (options.prune !== undefined && typeof options.prune !== 'boolean') {
      throw new InvalidOptionError(
        `Invalid prune ${describeValue(options.prune)}: expected true or false`,
      )
    }
    const resolved = definitions.map((d) => this.#resolve(d))
    const names = new Set<string>()
    for (const r of resolved) {
      if (names.has(r.name))
        throw new InvalidOptionError(`Schedule ${describeValue(r.name)} is defined twice`)
      names.add(r.name)
    }
    // Name order: two define() calls lock and insert in one order, so they wait instead of deadlocking.
    resolved.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    const host = await this.#host()
    const result = {
      created: [] as string[],
      updated: [] as string[],
      unchanged: [] as string[],
      pruned: [] as string[],
    }
    await host.executor.transaction(async (tx) => {
      result.created.length =
        result.updated.length =
        result.unchanged.length =
        result.pruned.length =
          0
      const nowMs = await this.#now(tx, host)
      const existing = new Map(
        (await tx.query<ScheduleRow>(host.statements.lockMany, [[...names]])).map((row) => [
          row.name,
          row,
        ]),
      )
      for (const r of resolved) {
        const row = existing.get(r.name)
        if (row && row.definition_hash === r.hash && row.source === 'code') {
          result.unchanged.push(r.name)
          continue
        }
        const stored = this.#placement(r, row, nowMs)
        // A concurrent define() may insert the same new name first: the
        // upsert then waits for it and writes nothing when the definition is the same.
        if (await this.#write(tx, host, host.statements.upsert, stored, 'code')) {
          ;(row ? result.updated : result.created).push(r.name)
        } else {
          result.unchanged.push(r.name)
        }
      }
      if (options.prune) {
        const pruned = await tx.query<{ name: string }>(host.statements.prune, [
          [...names],
          host.statements.channel,
        ])
        result.pruned.push(...pruned.map((row) => row.name))
      }
    })
    return result
  }

  /** Where a written schedule's grid and next run go, given the row it replaces. */
  #placement(r: ResolvedSchedule, row: ScheduleRow | undefined, nowMs: number): Stored {
    const anchorMs = r.startAtMs ?? row?.anchor_at_ms ?? nowMs
    const timing = timingOf(r, anchorMs)
    if (!row) return { resolved: r, anchorMs, nextRunMs: firstRun(timing, nowMs) }
    const sameTiming = timingKey(rowTiming(row)) === timingKey(r) && row.anchor_at_ms === anchorMs
    if (sameTiming && row.enabled === r.enabled)
      return { resolved: r, anchorMs, nextRunMs: row.next_run_ms }
    return { resolved: r, anchorMs, nextRunMs: resumeRun(timing, nowMs) }
  }

  async create(definition: ScheduleDefinition): Promise<ScheduleInfo> {
    const r = this.#resolve(definition)
    const host = await this.#host()
    return host.executor.transaction(async (tx) => {
      const nowMs = await this.#now(tx, host)
      if (
        !(await this.#write(
          tx,
          host,
          host.statements.insert,
          this.#placement(r, undefined, nowMs),
          'api',
        ))
      ) {
        throw new ScheduleExistsError(r.name)
      }
      const [row] = await tx.query<ScheduleRow>(host.statements.get, [r.name])
      return scheduleInfo(row!)
    })
  }

  async update(name: string, changes: ScheduleChanges): Promise<ScheduleInfo> {
    assertScheduleName(name)
    if (typeof changes !== 'object' || changes === null || Array.isArray(changes)) {
      throw new InvalidOptionError(
        `Invalid changes for schedule ${describeValue(name)}: expected an object`,
      )
    }
    if ('name' in changes) {
      throw new InvalidOptionError(`Schedule ${describeValue(name)}: a schedule cannot be renamed`)
    }
    // Check the changes on their own before any SQL; the merged definition is checked again below.
    const probe: Record<string, unknown> = {
      actor: 'probe',
      queue: 'default',
      priority: 0,
      ...changes,
      name,
    }
    if (probe.everyMs === undefined && probe.cron === undefined) {
      if (probe.timezone !== undefined) probe.cron = '* * * * *'
      else probe.everyMs = 1
    }
    if (probe.everyMs !== undefined && probe.cron !== undefined) {
      throw new InvalidOptionError(
        `Schedule ${describeValue(name)}: give everyMs or cron (exactly one)`,
      )
    }
    this.#resolve(probe as unknown as ScheduleDefinition)
    const host = await this.#host()
    return host.executor.transaction(async (tx) => {
      const nowMs = await this.#now(tx, host)
      const [row] = await tx.query<ScheduleRow>(host.statements.lockMany, [[name]])
      if (!row) throw new ScheduleNotFoundError(name)
      const merged: Record<string, unknown> = { ...definitionOf(row), ...changes }
      if (changes.everyMs !== undefined) {
        delete merged.cron
        delete merged.timezone
      }
      if (changes.cron !== undefined) delete merged.everyMs
      const r = this.#resolve(merged as unknown as ScheduleDefinition)
      await this.#write(
        tx,
        host,
        host.statements.upsert,
        this.#placement(r, row, nowMs),
        row.source,
      )
      const [updated] = await tx.query<ScheduleRow>(host.statements.get, [name])
      return scheduleInfo(updated!)
    })
  }

  async #setEnabled(name: string, enabled: boolean): Promise<void> {
    assertScheduleName(name)
    const host = await this.#host()
    await host.executor.transaction(async (tx) => {
      // Locking the row waits for a tick that holds it (disable waits for an in-flight tick).
      const [row] = await tx.query<ScheduleRow>(host.statements.lockMany, [[name]])
      if (!row) throw new ScheduleNotFoundError(name)
      if (row.enabled === enabled) return
      const nowMs = await this.#now(tx, host)
      const next = enabled
        ? resumeRun(timingOf(rowTiming(row), row.anchor_at_ms), nowMs)
        : row.next_run_ms
      await tx.query(host.statements.setEnabled, [name, enabled, next, host.statements.channel])
    })
  }

  enable(name: string): Promise<void> {
    return this.#setEnabled(name, true)
  }

  disable(name: string): Promise<void> {
    return this.#setEnabled(name, false)
  }

  async delete(name: string): Promise<boolean> {
    assertScheduleName(name)
    const host = await this.#host()
    const rows = await host.executor.query(host.statements.delete, [name, host.statements.channel])
    return rows.length > 0
  }

  async get(name: string): Promise<ScheduleInfo | undefined> {
    assertScheduleName(name)
    const host = await this.#host()
    const [row] = await host.executor.query<ScheduleRow>(host.statements.get, [name])
    return row ? scheduleInfo(row) : undefined
  }

  async list(): Promise<ScheduleInfo[]> {
    const host = await this.#host()
    return (await host.executor.query<ScheduleRow>(host.statements.list)).map(scheduleInfo)
  }

  async nextRuns(name: string, count: number): Promise<Date[]> {
    assertScheduleName(name)
    if (!Number.isInteger(count) || count < 1 || count > 1_000) {
      throw new InvalidOptionError(
        `Invalid count ${describeValue(count)}: expected an integer from 1 to 1000`,
      )
    }
    const host = await this.#host()
    const [row] = await host.executor.query<ScheduleRow>(host.statements.get, [name])
    if (!row) throw new ScheduleNotFoundError(name)
    if (row.next_run_ms === null) return []
    return upcomingRuns(timingOf(rowTiming(row), row.anchor_at_ms), row.next_run_ms, count).map(
      (ms) => new Date(ms),
    )
  }

  async tick(options: TickOptions = {}): Promise<TickResult> {
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionError(
        `Invalid tick() options ${describeValue(options)}: expected an object`,
      )
    const limit = options.limit ?? 100
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new InvalidOptionError(
        `Invalid limit ${describeValue(options.limit)}: expected a positive integer`,
      )
    }
    const host = await this.#host()
    const st = host.statements
    const result = {
      schedules: 0,
      published: [] as TickOccurrence[],
      skipped: [] as TickOccurrence[],
      failed: [] as { schedule: string; error: unknown }[],
    }
    const failedNames: string[] = []
    while (result.schedules < limit) {
      let taken: string | undefined
      let published: TickOccurrence[] = []
      let skipped: TickOccurrence[] = []
      try {
        await host.executor.transaction(async (tx) => {
          published = []
          skipped = []
          const [row] = await tx.query<ScheduleRow & { now_ms: number }>(st.takeDue, [failedNames])
          if (!row) return
          taken = row.name
          const plan = planTick(
            timingOf(rowTiming(row), row.anchor_at_ms),
            row.catch_up,
            row.next_run_ms!,
            row.now_ms,
          )
          const occurrences = plan.intendedMs.map((ms) => ({
            schedule: row.name,
            intendedAt: new Date(ms),
            messageId: occurrenceId(host.ns, row.name, ms),
          }))
          let busy = false
          if (row.overlap === 'skip' && row.last_message_id !== null && occurrences.length > 0) {
            const [check] = await tx.query<{ unfinished: boolean }>(st.isUnfinished, [
              row.last_message_id,
            ])
            busy = check!.unfinished
          }
          if (busy) {
            skipped = occurrences
          } else if (occurrences.length > 0) {
            const entries: EnqueueEntry[] = occurrences.map((o) => ({
              message: this.#broker.message(row.actor, row.args, {
                id: o.messageId,
                queue: row.queue,
                priority: row.priority,
                options: occurrenceOptions(row.name, o.intendedAt.getTime()),
              }),
              dedupKey: occurrenceKey(row.name, o.intendedAt.getTime()),
              dedupTtlMs: DEDUP_TTL_MS,
            }))
            // In this transaction: the messages commit with the advance, or neither does.
            await this.#broker.enqueueMany(entries, { transaction: tx })
            published = occurrences
          }
          const last = published.at(-1)
          await tx.query(st.advance, [
            row.name,
            plan.nextRunMs,
            last ? last.intendedAt.getTime() : null,
            last ? last.messageId : null,
          ])
        })
      } catch (error) {
        if (taken === undefined) throw error
        failedNames.push(taken)
        result.failed.push({ schedule: taken, error })
        host.logger.error('scheduler: publishing a due occurrence failed; it stays due', {
          schedule: taken,
          error,
        })
      }
      if (taken === undefined) break
      result.schedules += 1
      if (!result.failed.some((f) => f.schedule === taken)) {
        result.published.push(...published)
        result.skipped.push(...skipped)
      }
    }
    return result
  }

  start(options: Omit<StartSchedulerOptions, 'broker'> = {}): RunningScheduler {
    const loop = new SchedulerLoop(this, () => this.#host(), options)
    loop.start()
    return loop
  }
}

/**
 * The scheduler of a broker created with the {@link scheduler} plugin: the
 * imperative API (`create`, `update`, `enable`, `disable`, `delete`, `get`,
 * `list`, `nextRuns`), `define()` for schedules declared in code, `tick()`,
 * and `start()` for the loop. Definitions are checked before any SQL.
 *
 * @example
 * import { createBroker } from '@iddqueue/core'
 * import { createScheduler, scheduler } from '@iddqueue/scheduler'
 *
 * const broker = createBroker({ url: process.env.DATABASE_URL, plugins: [scheduler()] })
 * await broker.migrate()
 * const schedules = createScheduler(broker)
 * await schedules.define([{ name: 'reports', actor: 'generate_report', queue: 'reports', everyMs: 60_000 }])
 * const running = schedules.start()
 * running.stopOnSignals()
 */
export function createScheduler(broker: Broker, options: SchedulerOptions = {}): Scheduler {
  if (typeof broker?.message !== 'function' || typeof broker.ready !== 'function') {
    throw new InvalidOptionError('Invalid broker: expected a broker from createBroker()')
  }
  return new SchedulerApi(broker, options)
}
