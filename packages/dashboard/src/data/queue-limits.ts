import type { Broker } from '@iddqueue/core'

/** @internal A limit as `@iddqueue/coordination`'s `listLimits()` returns it (typed structurally: no dependency). */
export interface LimitRow {
  readonly scope: 'queue' | 'actor' | 'key'
  readonly name: string
  readonly concurrency: number | null
  readonly rate: { readonly limit: number; readonly periodMs: number } | null
  readonly heldUntil: Date | null
  readonly updatedAt: Date
}

interface CoordinationLike {
  readonly name: string
  listLimits(): Promise<LimitRow[]>
}

/**
 * @internal The limits of a queue, and of the actors whose messages it
 * holds, when the broker has the `coordination()` plugin; undefined when
 * it has not. Reads them through the plugin's own `listLimits()`.
 */
export async function queueLimits(
  broker: Broker,
  queue: string,
  actors: ReadonlySet<string>,
): Promise<LimitRow[] | undefined> {
  const plugin = broker.plugins.find(
    (candidate): candidate is typeof candidate & CoordinationLike =>
      candidate.name === '@iddqueue/coordination' &&
      typeof (candidate as Partial<CoordinationLike>).listLimits === 'function',
  )
  if (!plugin) return undefined
  const limits = await plugin.listLimits()
  return limits.filter(
    (limit) =>
      (limit.scope === 'queue' && limit.name === queue) ||
      (limit.scope === 'actor' && actors.has(limit.name)),
  )
}
