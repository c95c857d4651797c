import { IddqueueError } from '@iddqueue/schema'
import { assertName } from '../actor/names.js'
import {
  checkObject,
  integerOption,
  labelledRefusal,
  MAX_TIMER_MS,
} from '../options/check-option.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { isConnectionError, wrapError } from '../runtime/wrap-error.js'

/**
 * Options of `broker.join()`.
 *
 * @example
 * await broker.join({ queues: ['emails'], timeoutMs: 10_000, intervalMs: 50 })
 */
export interface JoinOptions {
  /** Default: every queue of the declared actors. */
  readonly queues?: readonly string[] | undefined
  /** Give up after this long with a `JoinTimeoutError`. Default 60,000 ms. */
  readonly timeoutMs?: number | undefined
  /** How often to look. Default 25 ms. */
  readonly intervalMs?: number | undefined
}

/**
 * `broker.join()` gave up: the queues still held messages.
 *
 * @example
 * await broker.join({ timeoutMs: 1_000 }).catch((error) => {
 *   if (JoinTimeoutError.isInstance(error)) console.error(error.message)
 * })
 */
export class JoinTimeoutError extends IddqueueError {}

/** @internal */
export async function join(core: BrokerContext, options: JoinOptions): Promise<void> {
  checkObject('options', options, 'options for join()', false)
  if (options.queues !== undefined && !Array.isArray(options.queues)) {
    throw labelledRefusal('queues', options.queues, 'an array of queue names', 'queues for join()')
  }
  const queues = options.queues ?? [...new Set([...core.actors.values()].map((a) => a.queue))]
  for (const queue of queues) assertName('queue', queue)
  const where = { where: 'join()', max: MAX_TIMER_MS }
  const timeoutMs = integerOption('timeoutMs', options.timeoutMs, 60_000, { min: 0, ...where })
  const intervalMs = integerOption('intervalMs', options.intervalMs, 25, { min: 1, ...where })
  if (queues.length === 0) return
  const deadline = performance.now() + timeoutMs
  const compiled = (await core.queries())
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('pending'))
    .where('state', 'in', ['queued', 'consumed'])
    .where('queue', 'in', queues)
    .compile()
  const pause = () => new Promise((resolve) => setTimeout(resolve, intervalMs))
  for (;;) {
    let pending: number
    try {
      const [row] = await core.executor.query<{ pending: number | string }>(
        compiled.sql,
        compiled.parameters,
      )
      pending = Number(row?.pending ?? 0)
    } catch (error) {
      // A lost connection is waited out like a busy queue (the pool reconnects);
      // it is reported only if it outlasts the timeout.
      if (!isConnectionError(error) || performance.now() > deadline)
        throw wrapError(error, 'join queues')
      await pause()
      continue
    }
    if (pending === 0) return
    if (performance.now() > deadline) {
      throw new JoinTimeoutError(
        `Queues ${queues.join(', ')} still hold ${pending} queued or consumed messages after ${timeoutMs} ms`,
      )
    }
    await pause()
  }
}
