import { hostname } from 'node:os'
import type { BrokerContext } from '../broker/broker-context.js'
import { purge, recover } from '../ops/maintenance.js'
import type { ResolvedWorkerOptions } from './worker-options.js'

const ORPHAN_SWEEP_EVERY = 15

/**
 * @internal A worker's presence in the `workers` table: registration, a
 * heartbeat every `heartbeatIntervalMs`, and on the same tick the crash
 * recovery sweep (messages of workers silent for `staleAfterMs` go back to
 * the queue) and, every `purgeIntervalMs`, the purge that one worker of the
 * namespace runs at a time.
 */
export class Liveness {
  #timer: NodeJS.Timeout | undefined
  #ticking = false
  #ticks = 0
  #nextPurgeAt: number

  constructor(
    private readonly core: BrokerContext,
    private readonly workerId: string,
    private readonly queues: readonly string[],
    private readonly options: ResolvedWorkerOptions,
    private readonly onError: (error: unknown) => void,
    /** Runs on every tick: the worker re-reads pause and cancellation state it may have missed. */
    private readonly onTick: () => Promise<void>,
  ) {
    // Spread first purges over the interval so workers started together do not all try at once.
    const interval =
      options.purgeIntervalMs === false ? Number.POSITIVE_INFINITY : options.purgeIntervalMs
    this.#nextPurgeAt = Date.now() + interval * (0.1 + 0.9 * Math.random())
  }

  async register(): Promise<void> {
    await this.core.executor.query(this.core.statements.registerWorker, [
      this.workerId,
      hostname(),
      process.pid,
      this.queues,
      this.options.concurrency,
    ])
  }

  start(): void {
    this.#timer = setInterval(() => void this.#tick(), this.options.heartbeatIntervalMs)
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    this.#timer = undefined
    try {
      await this.core.executor.query(this.core.statements.deregisterWorker, [this.workerId])
    } catch (error) {
      // The row goes stale and the next sweep of another worker removes it.
      this.core.logger.warn('could not deregister worker', { worker: this.workerId, error })
    }
  }

  async #tick(): Promise<void> {
    if (this.#ticking) return
    this.#ticking = true
    try {
      const alive = await this.core.executor.query(this.core.statements.heartbeat, [this.workerId])
      if (alive.length === 0) {
        this.core.logger.warn(
          'worker was presumed dead (event loop blocked longer than staleAfterMs?); its messages were requeued and may run twice',
          { worker: this.workerId },
        )
        await this.register()
      }
      await this.onTick()
      const orphans = ++this.#ticks % ORPHAN_SWEEP_EVERY === 0
      const recovered = await recover(this.core, {
        staleAfterMs: this.options.staleAfterMs,
        orphans,
      })
      if (recovered > 0) this.core.logger.info('recovered messages of dead workers', { recovered })
      if (Date.now() >= this.#nextPurgeAt && this.options.purgeIntervalMs !== false) {
        this.#nextPurgeAt = Date.now() + this.options.purgeIntervalMs
        const result = await purge(this.core, {
          olderThanMs: this.options.retentionMs,
          exclusive: true,
        })
        if (!result.skipped && result.messages + result.deduplicationKeys > 0) {
          this.core.logger.info('purged old rows', { ...result })
        }
      }
    } catch (error) {
      this.onError(error)
    } finally {
      this.#ticking = false
    }
  }
}
