import type { RetryFailedResult } from '@iddqueue/core'
import { uuidOperand } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withBroker } from '../with-broker.js'

/** The exit code of each outcome, and what to tell the user when it is not a success. */
const OUTCOMES: Record<
  RetryFailedResult['status'],
  { code: number; text?: (id: string) => string }
> = {
  retried: { code: EXIT.ok },
  missing: { code: EXIT.notFound, text: (id) => `no message ${id}` },
  'not-rejected': {
    code: EXIT.wrongState,
    text: (id) => `message ${id} is not rejected; nothing changed`,
  },
  busy: {
    code: EXIT.busy,
    text: (id) => `a worker is still recording the rejection of message ${id}; try again shortly`,
  },
}

/**
 * @internal `iddqueue retry ID` puts a rejected message back in its queue
 * and prints `{ id, status }`. Exit 3 when missing, 4 when not rejected, 5
 * when a worker still holds it.
 */
export const retryCommand: Command = {
  name: 'retry',
  operands: ['ID'],
  summary: 'queue a rejected message again now, same id and arguments (JSON)',
  async run(input, io) {
    const id = uuidOperand(input.operands[0], 'message id')
    const { status } = await withBroker(input.global, io, (broker) => broker.retryFailed(id))
    printJson(io, { id, status })
    const outcome = OUTCOMES[status]
    if (outcome.text) io.err(`iddqueue retry: ${outcome.text(id)}\n`)
    return outcome.code
  },
}
