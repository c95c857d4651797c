import type { EncodedMessage } from '@iddqueue/core'
import { Message, type SettleEvent } from '@iddqueue/core'
import type { CoordinationSetup } from './coordination-setup.js'
import { GROUP_OPTION } from './group.js'
import { failGroupsSql, recordMembersSql } from './sql/group-sql.js'

/** @internal The group a message belongs to, if any. */
export function groupOf(message: Message): string | undefined {
  const id = message.options[GROUP_OPTION]
  return typeof id === 'string' ? id : undefined
}

/**
 * @internal The settle hook for group members: records the successes (and
 * sends the completion callbacks of the groups they complete) and the
 * final failures (and the failure callbacks), all in the settle
 * transaction.
 */
export async function settleGroups(setup: CoordinationSetup, event: SettleEvent): Promise<void> {
  const doneGroups: string[] = []
  const doneMessages: string[] = []
  const failed = new Set<string>()
  for (const settled of event.settled) {
    const group = groupOf(settled.message)
    if (group === undefined) continue
    if (settled.state === 'done') {
      doneGroups.push(group)
      doneMessages.push(settled.message.id)
    } else if (settled.state === 'rejected' || settled.state === 'cancelled') failed.add(group)
  }
  const callbacks: Message[] = []
  if (doneGroups.length > 0) {
    const rows = await event.executor.query<{ completed: boolean; on_completion: string | null }>(
      recordMembersSql(setup.ns),
      [doneGroups, doneMessages],
    )
    for (const row of rows)
      if (row.completed && row.on_completion) callbacks.push(decode(row.on_completion))
  }
  if (failed.size > 0) {
    const rows = await event.executor.query<{ on_failure: string | null }>(
      failGroupsSql(setup.ns),
      [[...failed]],
    )
    for (const row of rows) if (row.on_failure) callbacks.push(decode(row.on_failure))
  }
  if (callbacks.length > 0) await setup.enqueueMany(callbacks, { transaction: event.executor })
}

function decode(json: string): Message {
  const m = JSON.parse(json) as EncodedMessage
  return new Message(undefined, m.id, m.actor, m.queue, m.args, m.priority, m.options)
}
