import type { Message } from '@iddqueue/core'

/**
 * Which occurrence of which schedule a message is, read from
 * `message.options.schedule` (the scheduler writes it there), or undefined
 * for a message a schedule did not send.
 *
 * @example
 * broker.actor('generate_report', async (account: number, ctx: ActorContext) => {
 *   const occurrence = scheduledOccurrence(ctx.message)
 *   // One report per intended time, even when the message is delivered twice.
 *   await reports.upsert({ account, period: occurrence?.intendedAt ?? new Date() })
 * })
 */
export function scheduledOccurrence(
  message: Pick<Message, 'options'>,
): ScheduledOccurrence | undefined {
  const value = message.options.schedule as { name?: unknown; intendedAt?: unknown } | undefined
  if (typeof value?.name !== 'string' || typeof value.intendedAt !== 'string') return undefined
  return { name: value.name, intendedAt: new Date(value.intendedAt) }
}

/**
 * The schedule and intended time of a scheduled message.
 *
 * @example
 * const { name, intendedAt }: ScheduledOccurrence = scheduledOccurrence(ctx.message)!
 */
export interface ScheduledOccurrence {
  /** The schedule's name. */
  readonly name: string
  /** When this occurrence was due (not when it was published or runs). */
  readonly intendedAt: Date
}

/** @internal What the scheduler stores under `options.schedule`. */
export function occurrenceOptions(name: string, intendedMs: number): Record<string, unknown> {
  return { schedule: { name, intendedAt: new Date(intendedMs).toISOString() } }
}
