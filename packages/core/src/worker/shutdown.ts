import { WorkerShutdown } from '../errors.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import type { ClaimLoop } from './claim-loop.js'
import type { Heartbeat } from './heartbeat.js'
import type { Releasable } from './release.js'
import type { RunExecutor } from './run-executor.js'
import type { RunSlots } from './run-slots.js'
import type { SettleBatcher } from './settle-batcher.js'
import type { ResolvedWorkerOptions } from './worker-options.js'

/** @internal The parts of a worker a graceful stop winds down, in order. */
export interface ShutdownParts {
  readonly core: BrokerContext
  readonly workerId: string
  readonly options: ResolvedWorkerOptions
  readonly loop: ClaimLoop
  readonly slots: RunSlots
  readonly executor: RunExecutor
  readonly settler: SettleBatcher
  readonly heartbeat: Heartbeat | undefined
  /** Wake-up, control and reconnect subscriptions. */
  readonly unsubscribe: (() => Promise<void> | void)[]
  readonly release: (deliveries: readonly Releasable[]) => void
  /** Resolves once none of the worker's own statements is in flight. */
  readonly statementsSettled: () => Promise<void>
}

/**
 * @internal A graceful stop, once the worker claims nothing more: drops its
 * subscriptions, returns buffered messages at once, signals handlers of
 * actors with `notifyShutdown`, lets running handlers finish for up to
 * `shutdownTimeoutMs` (then aborts them with `WorkerShutdown` and returns
 * their messages), writes pending outcomes and deregisters. Resolves once
 * none of the worker's statements is in flight (each has its deadline), so
 * the caller may end the pool right after.
 */
export async function shutdown(parts: ShutdownParts): Promise<void> {
  const { core, workerId, options, loop, slots, executor, settler } = parts
  // Claims in flight answer first: their rows go back with the outcomes below.
  await loop.stop()
  for (const unsubscribe of parts.unsubscribe.splice(0))
    await Promise.resolve(unsubscribe()).catch(() => {})
  parts.release(loop.buffer.splice(0))
  for (const run of slots.values()) {
    if (run.actor?.options.notifyShutdown) run.abort(new WorkerShutdown('The worker is stopping'))
  }
  if (slots.size > 0) {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), options.shutdownTimeoutMs)
    })
    const finished = await Promise.race([executor.drained().then(() => true), timeout])
    clearTimeout(timer)
    if (!finished) {
      core.logger.warn('shutdown timeout: aborting running handlers and returning their messages', {
        worker: workerId,
        running: slots.size,
      })
      for (const run of slots.values()) {
        run.abandoned = true
        run.abort(new WorkerShutdown('The worker stopped before this handler finished'))
      }
      parts.release(
        slots.values().map((run) => ({
          id: run.message.id,
          actor: run.message.actor,
          queue: run.message.queue,
          retries: run.retries,
        })),
      )
    }
  }
  let settleTimer: NodeJS.Timeout | undefined
  await Promise.race([
    settler.drain(),
    new Promise<void>((resolve) => {
      settleTimer = setTimeout(resolve, Math.max(5_000, options.shutdownTimeoutMs))
    }),
  ])
  clearTimeout(settleTimer)
  if (settler.pending > 0) {
    core.logger.warn(
      'could not record every outcome before stopping; crash recovery will requeue them',
      { worker: workerId, pending: settler.pending },
    )
  }
  settler.abandon()
  await parts.heartbeat?.stop()
  await parts.statementsSettled()
}
