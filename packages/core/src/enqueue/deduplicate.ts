import type { Executor } from '@iddqueue/schema'
import { Message, type MessageHost } from '../message/message.js'
import type { Statements } from '../sql/statements.js'
import type { PreparedEntry } from './prepared-entry.js'

/** The message as the deduplication row keeps it, to return to duplicates. */
function storedMessage(entry: PreparedEntry): string {
  const m = entry.message
  return `{"id":${JSON.stringify(m.id)},"actor":${JSON.stringify(m.actor)},"queue":${JSON.stringify(m.queue)},"args":${entry.argsJson},"priority":${m.priority},"options":${entry.optionsJson}${m.eta ? `,"eta":${JSON.stringify(m.eta.toISOString())}` : ''}${entry.delayMs !== null ? `,"delayMs":${entry.delayMs}` : ''}}`
}

interface StoredMessage {
  readonly id: string
  readonly actor: string
  readonly queue: string
  readonly args: unknown[]
  readonly priority: number
  readonly options: Record<string, unknown>
  readonly eta?: string
}

/**
 * @internal Claims the entry's deduplication key in `tx`. Returns undefined
 * when this call claimed it (the message must be written), or the original
 * message when a live claim exists (a duplicate: nothing is written).
 */
export async function claimDeduplicationKey(
  tx: Executor,
  statements: Statements,
  host: MessageHost,
  entry: PreparedEntry,
): Promise<Message | undefined> {
  const dedup = entry.dedup!
  const claimed = await tx.query(statements.claimDeduplicationKey, [
    entry.message.queue,
    dedup.key,
    entry.message.id,
    storedMessage(entry),
    dedup.ttlMs,
  ])
  if (claimed.length > 0) return undefined
  const [row] = await tx.query<{ message: StoredMessage }>(statements.readDeduplicationKey, [
    entry.message.queue,
    dedup.key,
  ])
  // The winner's row is visible: the failed claim waited for it to commit.
  const stored = row!.message
  return Message.bind(
    new Message(
      stored.id,
      stored.actor,
      stored.queue,
      stored.args,
      stored.priority,
      stored.options,
      stored.eta ? new Date(stored.eta) : undefined,
    ),
    host,
  )
}
