import { uuidOperand } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue cancel-status ID` prints `{ id, state, requested }`;
 * exit 3 (with `state: null`) when there is no such message.
 */
export const cancelStatusCommand: Command = {
  name: 'cancel-status',
  operands: ['ID'],
  summary: "a message's state and whether its cancellation was requested (JSON)",
  async run(input, io) {
    const id = uuidOperand(input.operands[0], 'message id')
    const status = await withBroker(input.global, io, (broker) => broker.cancellationStatus(id))
    printJson(io, { id, ...status })
    if (status.state !== null) return EXIT.ok
    io.err(`iddqueue cancel-status: no message ${id}\n`)
    return EXIT.notFound
  },
}
