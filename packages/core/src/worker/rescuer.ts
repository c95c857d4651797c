import { purge, type RecoveredRow, reportRecovered } from '../ops/maintenance.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import type { ResolvedWorkerOptions } from './worker-options.js'

/** Every this many sweeps, the leader also looks for messages of unregistered workers. */
const ORPHAN_SWEEP_EVERY = 15

/**
 * @internal The namespace's maintenance, run from each worker's heartbeat
 * but done by one leader at a time: crash recovery (messages of workers
 * silent for `staleAfterMs` go back to the queue, and every fifteenth sweep
 * those of workers not registered at all) and, every `purgeIntervalMs`, the
 * purge of old rows. The leader is the longest-registered live worker, under
 * the namespace's rescuer advisory lock (see `rescuer-lead.ts`); the others
 * only ask, so N workers do not all rescan every heartbeat.
 */
export class Rescuer {
  #sweeps = 0
  #nextPurgeAt: number
  readonly #lockKey: string

  constructor(
    private readonly core: BrokerContext,
    private readonly workerId: string,
    private readonly options: ResolvedWorkerOptions,
  ) {
    this.#lockKey = core.ns.lockKey('rescuer').toString()
    // Spread first purges over the interval so workers started together do not all try at once.
    const interval =
      options.purgeIntervalMs === false ? Number.POSITIVE_INFINITY : options.purgeIntervalMs
    this.#nextPurgeAt = Date.now() + interval * (0.1 + 0.9 * Math.random())
  }

  /** One round of maintenance; throws what the database threw. */
  async tick(): Promise<void> {
    const recovered = await this.#rescue()
    if (recovered !== undefined && recovered > 0)
      this.core.logger.info('recovered messages of dead workers', { recovered })
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
  }

  /**
   * Recovers the messages of dead workers if this worker leads, and reports
   * them (`messages:recovered`) once committed; undefined if it does not lead.
   */
  async #rescue(): Promise<number | undefined> {
    const { statements } = this.core
    const staleAfterMs = this.options.staleAfterMs
    const recovered = await this.core.executor.transaction(async (tx) => {
      const [row] = await tx.query<{ lead: boolean }>(statements.rescuerLead, [
        this.#lockKey,
        staleAfterMs,
        this.workerId,
      ])
      if (!row?.lead) return undefined
      const dead = await tx.query<RecoveredRow>(statements.recover, [
        staleAfterMs,
        statements.wakeChannel,
      ])
      if (++this.#sweeps % ORPHAN_SWEEP_EVERY !== 0) return dead
      const orphans = await tx.query<RecoveredRow>(statements.recoverOrphans, [
        statements.wakeChannel,
      ])
      return [...dead, ...orphans]
    })
    if (recovered === undefined) return undefined
    reportRecovered(this.core, recovered)
    return recovered.length
  }
}
