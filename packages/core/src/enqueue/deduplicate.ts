import type { Executor } from '@iddqueue/schema'
import { Message, type MessageHost } from '../message/message.js'
import type { Statements } from '../sql/statements.js'
import type { PreparedEntry } from './prepared-entry.js'

/** @internal The message as the deduplication row keeps it, to return to duplicates. */
export function storedMessage(entry: PreparedEntry): string {
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
 * when the entry must be written (this call claimed the key, or, in replace
 * mode, took it over from a message that already started), or the message
 * to return instead: the original (a duplicate), or in replace mode the
 * still-queued original with this entry's content.
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
  // The failed claim also locked the key's row (ON CONFLICT DO UPDATE locks
  // the conflicting row even when its WHERE is false), so in replace mode
  // concurrent senders of one key take turns from here to their commit.
  const stored = row!.message
  if (dedup.replace) return replaceOriginal(tx, statements, entry, stored.id)
  return new Message(
    host,
    stored.id,
    stored.actor,
    stored.queue,
    stored.args,
    stored.priority,
    stored.options,
    stored.eta ? new Date(stored.eta) : undefined,
  )
}

/**
 * Debounce: replaces the content of the key's message if it is still
 * queued (returning it), or points the key at the entry (returning
 * undefined: the entry must be written).
 */
async function replaceOriginal(
  tx: Executor,
  statements: Statements,
  entry: PreparedEntry,
  originalId: string,
): Promise<Message | undefined> {
  const m = entry.message
  const [row] = await tx.query<{ replaced: number }>(statements.replaceQueued, [
    originalId,
    m.actor,
    entry.argsJson,
    entry.optionsJson,
    m.priority,
    entry.delayMs,
    entry.etaMs,
    statements.wakeChannel,
  ])
  const replaced = (row?.replaced ?? 0) > 0
  const holder = replaced ? mergedEntry(entry, originalId) : entry
  await tx.query(statements.repointDeduplicationKey, [
    m.queue,
    entry.dedup!.key,
    holder.message.id,
    storedMessage(holder),
    entry.dedup!.ttlMs,
  ])
  return replaced ? holder.message : undefined
}

/** @internal The entry's content under an earlier message's id (a debounce replacing it). */
export function mergedEntry(entry: PreparedEntry, id: string): PreparedEntry {
  return { ...entry, message: entry.message.with({ id }) }
}
