import type { Executor } from '@iddqueue/schema'
import { BrokerConnectionError } from '../errors.js'
import type { Message } from '../message/message.js'
import { encodeOptions } from '../message/message-codec.js'
import type { EnqueueEvent } from '../plugin/middleware-interface.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { isConnectionError, wrapError } from '../runtime/wrap-error.js'
import { claimDeduplicationKey, mergedEntry, storedMessage } from './deduplicate.js'
import { transactionExecutor } from './enqueue-options.js'
import type { PreparedEntry } from './prepared-entry.js'
import { SendCoalescer } from './send-coalescer.js'
import { DeadlinePassed, racesDeadline } from './send-deadline.js'

/**
 * @internal One insert statement for the entries: for one entry, a value
 * per column; the uniform variant (ids and arguments as arrays, the rest as
 * single values) when they share actor, queue, options, priority and delay;
 * otherwise one array per column.
 * With `skipExisting`, an id already stored is left alone; without it, it
 * fails the statement (see {@link isExistingId}).
 */
async function insertNow(
  core: BrokerContext,
  entries: readonly PreparedEntry[],
  executor: Executor,
  skipExisting: boolean,
  transactional: boolean,
): Promise<number> {
  // Only a caller's transaction notifies inside itself, so that its wake-up
  // exists only if it commits; the broker's own sends wake after their commit.
  const wakeChannel = transactional ? core.statements.wakeChannel : null
  const statements = skipExisting ? core.statements.insertSkippingExisting : core.statements.insert
  const n = entries.length
  const first = entries[0]!
  // What the one-row and uniform statements take as single values, after the id and arguments.
  const shared = [
    first.message.queue,
    first.message.actor,
    first.optionsJson,
    first.message.priority,
    first.delayMs,
    first.etaMs,
    wakeChannel,
  ]
  if (n === 1) {
    const [row] = await executor.query<{ inserted: number }>(statements.one, [
      first.message.id,
      first.argsJson,
      ...shared,
    ])
    return row?.inserted ?? 0
  }
  const ids = new Array<string>(n)
  const args = new Array<string>(n)
  let uniform = true
  for (let i = 0; i < n; i++) {
    const entry = entries[i]!
    ids[i] = entry.message.id
    args[i] = entry.argsJson
    if (
      uniform &&
      (entry.message.queue !== first.message.queue ||
        entry.message.actor !== first.message.actor ||
        entry.optionsJson !== first.optionsJson ||
        entry.message.priority !== first.message.priority ||
        entry.delayMs !== first.delayMs ||
        entry.etaMs !== first.etaMs)
    ) {
      uniform = false
    }
  }
  if (uniform) {
    const [row] = await executor.query<{ inserted: number }>(statements.uniform, [
      ids,
      args,
      ...shared,
    ])
    return row?.inserted ?? 0
  }
  const [row] = await executor.query<{ inserted: number }>(statements.many, [
    ids,
    entries.map((e) => e.message.queue),
    entries.map((e) => e.message.actor),
    args,
    entries.map((e) => e.optionsJson),
    entries.map((e) => e.message.priority),
    entries.map((e) => e.delayMs),
    entries.map((e) => e.etaMs),
    wakeChannel,
  ])
  return row?.inserted ?? 0
}

/** Each broker's coalescer of its own sends' inserts. */
const coalescers = new WeakMap<BrokerContext, SendCoalescer>()

/**
 * The insert of `entries`: a send the broker commits itself (its own
 * executor, no caller's transaction) may share its statement with other
 * sends in flight at the same time ({@link SendCoalescer}); the others are
 * inserted at once.
 */
function insertMessages(
  core: BrokerContext,
  entries: readonly PreparedEntry[],
  executor: Executor,
  skipExisting: boolean,
  transactional: boolean,
): Promise<number> {
  if (transactional || executor !== core.executor)
    return insertNow(core, entries, executor, skipExisting, transactional)
  let coalescer = coalescers.get(core)
  if (!coalescer) {
    coalescer = new SendCoalescer((shared, skip) =>
      insertNow(core, shared, core.executor, skip, false),
    )
    coalescers.set(core, coalescer)
  }
  return coalescer.run(entries, skipExisting)
}

/**
 * @internal True when `error` is the unique violation of a message id that
 * is already stored in this namespace's messages table (its only unique
 * constraint). Reads postgres.js's and node-postgres's field names.
 */
function isExistingId(core: BrokerContext, error: unknown): boolean {
  const e = error as {
    code?: unknown
    schema_name?: unknown
    table_name?: unknown
    schema?: unknown
    table?: unknown
  } | null
  return (
    e?.code === '23505' &&
    (e.schema_name ?? e.schema) === core.ns.schema &&
    (e.table_name ?? e.table) === core.ns.tableName('messages')
  )
}

/** Pauses before retrying a send that lost its connection. */
const RETRY_DELAYS_MS = [50, 250]

/**
 * @internal Runs the enqueue middleware around the insert of `entries` (no
 * deduplication) and returns how many rows were inserted. Inside a
 * transaction someone else owns (`transactional`) existing ids are always
 * skipped, since a failed statement would abort it.
 */
export async function writeMessages(
  core: BrokerContext,
  entries: readonly PreparedEntry[],
  executor: Executor,
  transactional: boolean,
  skipExisting = transactional,
): Promise<number> {
  let inserted = 0
  const hooks = core.enqueueHooks
  if (hooks.length === 0)
    return insertMessages(core, entries, executor, skipExisting, transactional)
  let added: Record<string, unknown> | undefined
  const event: EnqueueEvent = {
    messages: entries.map((e) => e.message),
    executor,
    transactional,
    addOptions(options) {
      added = { ...added, ...options }
    },
  }
  const insert = async () => {
    const written = added ? withOptions(entries, added) : entries
    inserted = await insertMessages(core, written, executor, skipExisting, transactional)
  }
  const run = (index: number): Promise<void> =>
    index === hooks.length ? insert() : hooks[index]!(event, () => run(index + 1))
  await run(0)
  return inserted
}

/** The entries with `added` options, where a message does not set them itself. */
function withOptions(
  entries: readonly PreparedEntry[],
  added: Readonly<Record<string, unknown>>,
): PreparedEntry[] {
  return entries.map((entry) => {
    const options = { ...added, ...entry.message.options }
    return { ...entry, optionsJson: encodeOptions(options) }
  })
}

/**
 * @internal Writes prepared messages: one statement for plain entries; a
 * transaction (a savepoint inside the caller's) when deduplication keys must
 * be claimed first or enqueue middleware runs. Returns the messages in input
 * order, a duplicate replaced by its original, and the ones actually written.
 */
async function writeEntries(
  core: BrokerContext,
  entries: readonly PreparedEntry[],
  executor: Executor,
  transactional: boolean,
  skipExisting: boolean,
): Promise<{ returned: Message[]; published: readonly PreparedEntry[]; inserted: number }> {
  let inserted = 0
  const write = async (tx: Executor, written: readonly PreparedEntry[]) => {
    inserted = await writeMessages(core, written, tx, transactional, skipExisting)
  }
  if (!entries.some((entry) => entry.dedup)) {
    if (core.enqueueHooks.length === 0) {
      await write(executor, entries)
    } else {
      // A middleware may write through event.executor, or throw after next():
      // its rows and the messages commit together or not at all, and a
      // failure inside a caller's transaction leaves it usable (savepoint).
      await executor.transaction((tx) => write(tx, entries))
    }
    return { returned: entries.map((entry) => entry.message), published: entries, inserted }
  }
  const published: PreparedEntry[] = []
  const returned = await executor.transaction(async (tx) => {
    published.length = 0
    const originals = new Map<PreparedEntry, Message>()
    // The entry written for each key this batch stores, and the entries
    // that share it: a later entry with the same key never reaches SQL (the
    // row it would read or replace is not written yet).
    const writers = new Map<string, { written: PreparedEntry; members: PreparedEntry[] }>()
    const writtenFor = new Map<PreparedEntry, PreparedEntry>()
    // Keys are claimed in one order everywhere (queue, then key), so two
    // batches claiming the same keys in different input orders wait for each
    // other instead of deadlocking. The sort is stable: of two entries with
    // the same key, the first in the batch claims it.
    const claims = entries.filter((entry) => entry.dedup).sort(byQueueAndKey)
    for (const entry of claims) {
      const slot = `${entry.message.queue}\u0000${entry.dedup!.key}`
      const writer = writers.get(slot)
      if (writer) {
        if (entry.dedup!.replace) writer.written = mergedEntry(entry, writer.written.message.id)
        writer.members.push(entry)
        continue
      }
      const original = await claimDeduplicationKey(tx, core.statements, core.host, entry)
      if (original) originals.set(entry, original)
      else writers.set(slot, { written: entry, members: [entry] })
    }
    for (const [slot, writer] of writers) {
      for (const member of writer.members) writtenFor.set(member, writer.written)
      if (writer.written === writer.members[0]) continue
      // A later entry of the batch replaced the first: the key describes it.
      const key = slot.slice(slot.indexOf('\u0000') + 1)
      await tx.query(core.statements.repointDeduplicationKey, [
        writer.written.message.queue,
        key,
        writer.written.message.id,
        storedMessage(writer.written),
        writer.written.dedup!.ttlMs,
      ])
    }
    // Each written entry once, at the place of the first entry that shares it.
    const seen = new Set<PreparedEntry>()
    for (const entry of entries) {
      if (originals.has(entry)) continue
      const written = writtenFor.get(entry) ?? entry
      if (!seen.has(written)) {
        seen.add(written)
        published.push(written)
      }
    }
    if (published.length > 0) await write(tx, published)
    return entries.map((entry) => originals.get(entry) ?? (writtenFor.get(entry) ?? entry).message)
  })
  return { returned, published, inserted }
}

function byQueueAndKey(a: PreparedEntry, b: PreparedEntry): number {
  const [qa, qb] = [a.message.queue, b.message.queue]
  if (qa !== qb) return qa < qb ? -1 : 1
  const [ka, kb] = [a.dedup!.key, b.dedup!.key]
  return ka === kb ? 0 : ka < kb ? -1 : 1
}

/** Wakes the workers of the queues written to, now that the send has committed. */
function wakeAfterCommit(core: BrokerContext, published: readonly PreparedEntry[]): void {
  const queues = new Set<string>()
  for (const entry of published) queues.add(entry.message.queue)
  core.waker.wake(queues)
}

/**
 * @internal Sends prepared messages and emits `message:enqueued` for the ones
 * written. An empty list does no SQL.
 *
 * Outside a caller's transaction the plain insert runs first; if an id is
 * already stored (the same message sent again), the send runs once more
 * skipping existing ids, so it is stored once. A lost connection is retried
 * the same way: message ids are made here, so a write that committed before
 * the connection broke is not doubled. Inside a caller's transaction
 * existing ids are skipped from the start and nothing is retried.
 *
 * Outside a caller's transaction the whole send, retries included, has a
 * deadline (`sendTimeoutMs`): past it, `BrokerConnectionError`.
 */
export async function enqueueEntries(
  core: BrokerContext,
  entries: readonly PreparedEntry[],
  transaction: unknown,
): Promise<Message[]> {
  const executor = transaction === undefined ? core.executor : transactionExecutor(transaction)
  if (entries.length === 0) return []
  core.assertOpen()
  await core.ready()
  const transactional = transaction !== undefined
  let skipExisting = transactional
  let reconnects = 0
  const timeoutMs = transactional ? undefined : core.sendTimeoutMs
  const deadline = timeoutMs === undefined ? 0 : performance.now() + timeoutMs
  const what = () =>
    entries.length === 1
      ? `enqueue a message for ${entries[0]!.message.actor}`
      : `enqueue ${entries.length} messages`
  for (;;) {
    try {
      const writing = writeEntries(core, entries, executor, transactional, skipExisting)
      const { returned, published, inserted } =
        timeoutMs === undefined ? await writing : await racesDeadline(writing, deadline, timeoutMs)
      if (!transactional && inserted > 0) wakeAfterCommit(core, published)
      if (core.events.has('message:enqueued')) {
        for (const entry of published)
          core.events.emit('message:enqueued', { message: entry.message })
      }
      return returned
    } catch (error) {
      if (!skipExisting && isExistingId(core, error)) {
        skipExisting = true
        continue
      }
      if (error instanceof DeadlinePassed) {
        throw new BrokerConnectionError(
          `Could not ${what()}: ${error.message} (sendTimeoutMs); the message may or may not be stored, and sending the same message again stores it at most once`,
          { cause: error },
        )
      }
      const pause = RETRY_DELAYS_MS[reconnects]
      if (
        !transactional &&
        pause !== undefined &&
        isConnectionError(error) &&
        (timeoutMs === undefined || performance.now() + pause < deadline)
      ) {
        reconnects++
        await new Promise((resolve) => setTimeout(resolve, pause))
        skipExisting = true
        continue
      }
      throw wrapError(error, what())
    }
  }
}
