import { type Broker, InvalidOptionError } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import type { Scheduler, TickResult } from './scheduler.js'
import type { SchedulerHost } from './scheduler-host.js'

/**
 * Options of {@link startScheduler} and `Scheduler.start()`.
 *
 * @example
 * const running = startScheduler({ broker, safetyPollMs: 30_000, onTick: (r) => log(r.published.length) })
 */
export interface StartSchedulerOptions {
  readonly broker: Broker
  /** The most schedules per tick transaction loop. Default 100. */
  readonly limit?: number
  /**
   * The longest sleep, in ms, even when no schedule is due sooner. It only
   * covers a change notification lost while the LISTEN connection was
   * reconnecting: one cheap indexed query per period. Default 60,000.
   */
  readonly safetyPollMs?: number
  /** The sleep between ticks in poll-only mode (no LISTEN). Default 1,000. */
  readonly pollIntervalMs?: number
  /** Called after each tick (for logs and metrics). */
  readonly onTick?: (result: TickResult) => void
}

/**
 * A scheduler loop running in this process.
 *
 * @example
 * const running = startScheduler({ broker })
 * process.on('SIGTERM', () => running.stop())
 */
export interface RunningScheduler {
  /** Finishes the current tick, then stops. Resolves once stopped. */
  stop(): Promise<void>
  /** Stops on SIGTERM or SIGINT (once each). Returns a function that removes the handlers. */
  stopOnSignals(): () => void
  /** Resolves once stopped (by `stop()`, a signal or the broker closing). */
  readonly stopped: Promise<void>
  /** Ticks run so far. */
  readonly ticks: number
}

/** Sleep when a due schedule is held by another scheduler's tick. */
const CONTENDED_MS = 25
const MAX_TIMER_MS = 2_147_483_647

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_TIMER_MS) {
    throw new InvalidOptionError(
      `Invalid ${name} ${describeValue(value)}: expected a positive integer of milliseconds`,
    )
  }
  return value
}

/** @internal The loop's options, checked, with their defaults. */
export interface LoopOptions {
  readonly limit: number
  readonly safetyPollMs: number
  readonly pollIntervalMs: number
  readonly onTick: ((result: TickResult) => void) | undefined
}

/**
 * @internal Checks the loop's options (of `start()`, `startScheduler()` and
 * the plugin's `runInWorkers`) before anything starts.
 */
export function resolveLoopOptions(options: unknown, where = 'start()'): LoopOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError(
      `Invalid ${where} options ${describeValue(options)}: expected an object`,
    )
  const o = options as Omit<StartSchedulerOptions, 'broker'>
  if (o.onTick !== undefined && typeof o.onTick !== 'function')
    throw new InvalidOptionError(`Invalid onTick ${describeValue(o.onTick)}: expected a function`)
  return {
    limit: positive('limit', o.limit, 100),
    safetyPollMs: positive('safetyPollMs', o.safetyPollMs, 60_000),
    pollIntervalMs: positive('pollIntervalMs', o.pollIntervalMs, 1_000),
    onTick: o.onTick,
  }
}

/** @internal The loop: tick, read the earliest next run, sleep until it or a change. */
export class SchedulerLoop implements RunningScheduler {
  readonly #scheduler: Scheduler
  readonly #host: () => Promise<SchedulerHost>
  readonly #limit: number
  readonly #safetyPollMs: number
  readonly #pollIntervalMs: number
  readonly #onTick: ((result: TickResult) => void) | undefined
  #stopping = false
  #woken = false
  #wake: (() => void) | undefined
  #done!: Promise<void>
  ticks = 0

  constructor(
    scheduler: Scheduler,
    host: () => Promise<SchedulerHost>,
    options: Omit<StartSchedulerOptions, 'broker'>,
  ) {
    this.#scheduler = scheduler
    this.#host = host
    const checked = resolveLoopOptions(options)
    this.#limit = checked.limit
    this.#safetyPollMs = checked.safetyPollMs
    this.#pollIntervalMs = checked.pollIntervalMs
    this.#onTick = checked.onTick
  }

  get stopped(): Promise<void> {
    return this.#done
  }

  start(): void {
    this.#done = this.#run()
  }

  #notify = () => {
    this.#woken = true
    this.#wake?.()
  }

  async #run(): Promise<void> {
    let host: SchedulerHost
    try {
      host = await this.#host()
    } catch (error) {
      this.#stopping = true
      throw error
    }
    let unsubscribe: (() => Promise<void>) | undefined
    let failures = 0
    try {
      if (host.listening) unsubscribe = await host.subscribe(host.statements.channel, this.#notify)
      while (!this.#stopping) {
        let waitMs: number
        try {
          this.#woken = false
          let result: TickResult
          do {
            result = await this.#scheduler.tick({ limit: this.#limit })
            this.ticks += 1
            this.#onTick?.(result)
          } while (result.schedules >= this.#limit && !this.#stopping)
          const [row] = await host.executor.query<{ wait_ms: number | null }>(
            host.statements.untilNext,
          )
          const ceiling = host.listening ? this.#safetyPollMs : this.#pollIntervalMs
          const until = row?.wait_ms ?? ceiling
          waitMs = Math.min(Math.max(Math.ceil(until), 0), ceiling)
          // Still due after a tick: another scheduler holds it, or it just failed here.
          if (until <= 0) waitMs = result.failed.length > 0 ? 1_000 : CONTENDED_MS
          failures = 0
        } catch (error) {
          if (this.#stopping) break
          failures += 1
          waitMs = Math.min(500 * 2 ** Math.min(failures, 6), 30_000)
          host.logger.error('scheduler: tick failed; retrying', { error, retryInMs: waitMs })
        }
        await this.#sleep(waitMs)
      }
    } finally {
      await unsubscribe?.().catch(() => {})
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#stopping || this.#woken) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.min(ms, MAX_TIMER_MS))
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.#wake = () => {
        this.#wake = undefined
        done()
      }
    })
  }

  async stop(): Promise<void> {
    this.#stopping = true
    this.#wake?.()
    await this.#done.catch(() => {})
  }

  stopOnSignals(): () => void {
    const handler = () => {
      void this.stop()
    }
    process.once('SIGTERM', handler)
    process.once('SIGINT', handler)
    return () => {
      process.off('SIGTERM', handler)
      process.off('SIGINT', handler)
    }
  }
}
