import { integerOption, uuidOperand } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue cancel ID` cancels a message and prints
 * `{ id, status, state }`: `cancelled`, `requested` (running: its signal
 * was aborted), `terminal` (already finished; nothing changed) or `missing`
 * (exit 3).
 */
export const cancelCommand: Command = {
  name: 'cancel',
  operands: ['ID'],
  options: { 'timeout-ms': { type: 'string', value: 'N' } },
  summary:
    "cancel a message; for a claimed one, waits up to --timeout-ms (default 2000) for its worker's answer (JSON)",
  async run(input, io) {
    const id = uuidOperand(input.operands[0], 'message id')
    const timeoutMs = integerOption(input, 'timeout-ms')
    const result = await withBroker(input.global, io, (broker) =>
      broker.cancel(id, timeoutMs === undefined ? {} : { timeoutMs }),
    )
    printJson(io, { id, ...result })
    if (result.status === 'missing') {
      io.err(`iddqueue cancel: no message ${id}\n`)
      return EXIT.notFound
    }
    if (result.status === 'terminal') {
      io.err(`iddqueue cancel: message ${id} is already ${result.state}; nothing changed\n`)
    }
    return EXIT.ok
  },
}
