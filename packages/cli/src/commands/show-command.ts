import { uuidOperand } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue show ID` prints one message in any state: state,
 * attempts, progress, last failure and timestamps; its arguments, options
 * and stack only with `--payload`. Exit 3 when there is no such message.
 */
export const showCommand: Command = {
  name: 'show',
  operands: ['ID'],
  options: { payload: { type: 'boolean' } },
  summary:
    'show one message: state, attempts, progress, failure, times; arguments only with --payload (JSON)',
  async run(input, io) {
    const id = uuidOperand(input.operands[0], 'message id')
    const payload = input.values.payload === true
    const info = await withBroker(input.global, io, (broker) => broker.getMessage(id, { payload }))
    if (!info) {
      io.err(`iddqueue show: no message ${id}\n`)
      return EXIT.notFound
    }
    printJson(io, info)
    return EXIT.ok
  },
}
