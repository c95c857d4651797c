import { assertName } from '../actor/names.js'
import { checkObject, integerOption, MAX_TIMER_MS } from '../options/check-option.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { wrapError } from '../runtime/wrap-error.js'
import { formatControl, onControl } from './control.js'

/**
 * Options of `broker.pause()`.
 *
 * @example
 * await broker.pause('emails', { timeoutMs: 0 }) // store the pause, do not wait for workers
 */
export interface PauseOptions {
  /**
   * How long to wait for every live worker of the queue to confirm it starts
   * nothing more: 0 to 2^31 - 1 ms. Default 5,000 ms. 0 returns as soon as
   * the pause is stored.
   */
  readonly timeoutMs?: number | undefined
}

/**
 * What `broker.pause()` found.
 *
 * @example
 * const { workers, acknowledged }: PauseResult = await broker.pause('emails')
 * if (acknowledged < workers) console.warn('some workers stop at their next heartbeat')
 */
export interface PauseResult {
  readonly queue: string
  /** Live workers consuming the queue when the pause was stored. */
  readonly workers: number
  /** Of those, how many confirmed before the timeout. The rest stop at their next heartbeat. */
  readonly acknowledged: number
}

/** @internal */
export async function pause(
  core: BrokerContext,
  queue: string,
  options: PauseOptions = {},
): Promise<PauseResult> {
  assertName('queue', queue)
  // Checked before the pause is stored: a refusal must change nothing.
  checkObject('options', options, 'options for pause()', false)
  const timeoutMs = integerOption('timeoutMs', options.timeoutMs, 5_000, {
    min: 0,
    max: MAX_TIMER_MS,
    where: 'pause()',
  })
  const acknowledged = new Set<string>()
  let expected: Set<string> | undefined
  let done: (() => void) | undefined
  const settle = () => {
    if (expected && [...expected].every((id) => acknowledged.has(id))) done?.()
  }
  // Listen before the pause commits so no acknowledgement is missed.
  const unsubscribe = await onControl(core, (message) => {
    if (message.kind === 'paused' && message.queue === queue) {
      acknowledged.add(message.workerId)
      settle()
    }
  })
  try {
    const rows = await core.executor.query<{ id: string | null }>(
      `with paused as (
  insert into ${core.ns.table('queue_control')} (queue, paused, updated_at) values ($1, true, now())
  on conflict (queue) do update set paused = true, updated_at = now()
  returning queue
), told as (
  select pg_notify($2, $3) from paused
)
select w.id from ${core.ns.table('workers')} w, (select count(*) from told) t where $1 = any(w.queues)`,
      [queue, core.statements.controlChannel, formatControl({ kind: 'pause', queue })],
    )
    expected = new Set(rows.flatMap((row) => (row.id ? [row.id] : [])))
    if (core.listener.available && timeoutMs > 0 && expected.size > 0) {
      let timer: NodeJS.Timeout | undefined
      await new Promise<void>((resolve) => {
        done = resolve
        timer = setTimeout(resolve, timeoutMs)
        settle()
      })
      clearTimeout(timer)
    }
    const confirmed = [...expected].filter((id) => acknowledged.has(id)).length
    if (confirmed < expected.size) {
      core.logger.warn(
        'some workers did not confirm the pause in time; they stop at their next heartbeat',
        {
          queue,
          workers: expected.size,
          acknowledged: confirmed,
        },
      )
    }
    return { queue, workers: expected.size, acknowledged: confirmed }
  } catch (error) {
    throw wrapError(error, `pause queue ${queue}`)
  } finally {
    await unsubscribe()
  }
}

/** @internal */
export async function resume(core: BrokerContext, queue: string): Promise<void> {
  assertName('queue', queue)
  try {
    await core.executor.query(
      `with resumed as (
  update ${core.ns.table('queue_control')} set paused = false, updated_at = now() where queue = $1 returning queue
)
select pg_notify($2, $3), pg_notify($4, $1) from resumed`,
      [
        queue,
        core.statements.controlChannel,
        formatControl({ kind: 'resume', queue }),
        core.statements.wakeChannel,
      ],
    )
  } catch (error) {
    throw wrapError(error, `resume queue ${queue}`)
  }
}

/**
 * @internal Paused queues among `queues` (all paused queues when omitted).
 * Workers read this on every heartbeat, so it is a plain statement.
 */
export async function pausedQueues(
  core: BrokerContext,
  queues?: readonly string[],
): Promise<string[]> {
  try {
    const rows = await core.executor.query<{ queue: string }>(
      queues
        ? `select queue from ${core.ns.table('queue_control')} where paused and queue = any($1::text[]) order by queue`
        : `select queue from ${core.ns.table('queue_control')} where paused order by queue`,
      queues ? [queues] : [],
    )
    return rows.map((row) => row.queue)
  } catch (error) {
    throw wrapError(error, 'read paused queues')
  }
}
