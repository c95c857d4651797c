import { hostname } from 'node:os'
import type { BrokerContext } from '../runtime/broker-context.js'
import type { ResolvedWorkerOptions } from './worker-options.js'

type ServerStart = { server_started_ms: number }

/**
 * @internal A worker's presence in the `workers` table: registration, a
 * heartbeat every `heartbeatIntervalMs` (registering again if it was
 * presumed dead), then on the same tick the worker's periodic duties
 * (`onTick`: control's refresh, the rescuer), and deregistration on stop.
 *
 * It is also how the worker learns that PostgreSQL came back: the first
 * heartbeat to succeed after failed ones, or one that finds the server
 * restarted (a new `pg_postmaster_start_time()`, even if no statement of
 * this worker failed), calls `onReconnect`.
 *
 * When a heartbeat finds the worker presumed dead, it says why: PostgreSQL
 * was unreachable (heartbeats failed, or went unanswered while the timer
 * kept firing: a network partition that drops packets fails nothing until
 * the statement's deadline) or the event loop was blocked (the timer itself
 * fired late: a synchronous handler, SIGSTOP, a debugger).
 */
export class Heartbeat {
  #timer: NodeJS.Timeout | undefined
  /** The tick in flight: at most one at a time, and stop() waits for it. */
  #beat: Promise<void> | undefined
  /** When the last heartbeat succeeded (performance.now()). */
  #lastBeatAt = performance.now()
  /** A heartbeat failed since the last that succeeded. */
  #failed = false
  /** When the heartbeat timer last fired (performance.now()). */
  #lastTimerAt = performance.now()
  /** The longest wait between two firings of the timer since the last heartbeat that succeeded. */
  #longestTimerGapMs = 0
  #serverStartedMs: number | undefined

  constructor(
    private readonly core: BrokerContext,
    private readonly workerId: string,
    private readonly queues: readonly string[],
    private readonly options: ResolvedWorkerOptions,
    private readonly onError: (error: unknown) => void,
    private readonly onTick: () => Promise<void>,
    private readonly onReconnect: () => Promise<void> = async () => {},
  ) {}

  async register(): Promise<void> {
    const [row] = await this.core.executor.query<ServerStart>(this.core.statements.registerWorker, [
      this.workerId,
      hostname(),
      process.pid,
      this.queues,
      this.options.concurrency,
    ])
    this.#lastBeatAt = performance.now()
    this.#serverStartedMs ??= row?.server_started_ms
  }

  start(): void {
    this.#lastTimerAt = performance.now()
    this.#timer = setInterval(() => {
      this.#timerFired()
      this.#beat ??= this.#tick().finally(() => {
        this.#beat = undefined
      })
    }, this.options.heartbeatIntervalMs)
  }

  /**
   * Stops the heartbeat, waits for a tick in flight (which could otherwise
   * register the worker again after it left), then deregisters.
   */
  async stop(): Promise<void> {
    clearInterval(this.#timer)
    this.#timer = undefined
    await this.#beat
    try {
      await this.core.executor.query(this.core.statements.deregisterWorker, [this.workerId])
    } catch (error) {
      // The row goes stale and the next sweep of another worker removes it.
      this.core.logger.warn('could not deregister worker', { worker: this.workerId, error })
    }
  }

  /** Records how late the timer fired: how long the event loop was kept from it. */
  #timerFired(): void {
    const now = performance.now()
    this.#longestTimerGapMs = Math.max(this.#longestTimerGapMs, now - this.#lastTimerAt)
    this.#lastTimerAt = now
  }

  async #tick(): Promise<void> {
    try {
      const alive = await this.core.executor.query<ServerStart>(this.core.statements.heartbeat, [
        this.workerId,
      ])
      const now = performance.now()
      const silentMs = Math.round(now - this.#lastBeatAt)
      // The answer can be read before the timer fires again after a freeze
      // (I/O before timers), so the gap still open counts too.
      const blockedMs =
        Math.max(this.#longestTimerGapMs, now - this.#lastTimerAt) -
        this.options.heartbeatIntervalMs
      // Blame whichever took most of the silence: the event loop, or the database.
      const blocked = blockedMs >= silentMs - blockedMs
      const failed = this.#failed
      this.#failed = false
      this.#longestTimerGapMs = 0
      this.#lastBeatAt = now
      const started = alive[0]?.server_started_ms
      const restarted =
        started !== undefined &&
        this.#serverStartedMs !== undefined &&
        started !== this.#serverStartedMs
      if (started !== undefined) this.#serverStartedMs = started
      if (alive.length === 0) {
        const { staleAfterMs } = this.options
        // Say what happened: a database outage is not a blocked event loop.
        const lost = failed
          ? 'its heartbeats failed: the database was unreachable or not answering'
          : 'its heartbeat went unanswered: the network or the database stalled'
        this.core.logger.warn(
          blocked
            ? `worker was presumed dead: no heartbeat for ${silentMs} ms while PostgreSQL answered, longer than staleAfterMs (${staleAfterMs} ms); the event loop was probably blocked (a synchronous handler?); its messages were queued again and may run twice`
            : `worker lost PostgreSQL for ${silentMs} ms (${lost}), longer than staleAfterMs (${staleAfterMs} ms), and was presumed dead; its messages were queued again and may run twice`,
          { worker: this.workerId, silentMs, staleAfterMs },
        )
        await this.register()
      }
      if (failed || restarted || alive.length === 0) await this.onReconnect()
      await this.onTick()
    } catch (error) {
      this.#failed = true
      this.onError(error)
    }
  }
}
