import { hostname } from 'node:os'
import type { BrokerContext } from '../runtime/broker-context.js'
import type { ResolvedWorkerOptions } from './worker-options.js'

/**
 * @internal A worker's presence in the `workers` table: registration, a
 * heartbeat every `heartbeatIntervalMs` (registering again if it was
 * presumed dead), then on the same tick the worker's periodic duties
 * (`onTick`: control's refresh, the rescuer), and deregistration on stop.
 */
export class Heartbeat {
  #timer: NodeJS.Timeout | undefined
  #ticking = false

  constructor(
    private readonly core: BrokerContext,
    private readonly workerId: string,
    private readonly queues: readonly string[],
    private readonly options: ResolvedWorkerOptions,
    private readonly onError: (error: unknown) => void,
    private readonly onTick: () => Promise<void>,
  ) {}

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
    } catch (error) {
      this.onError(error)
    } finally {
      this.#ticking = false
    }
  }
}
