import { uuidOperand } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue failed show ID` prints one rejected message; its
 * arguments, options and stack only with `--payload`. Exit 3 when there is
 * no such message, 4 when it is not rejected.
 */
export const failedShowCommand: Command = {
  name: 'failed show',
  operands: ['ID'],
  options: { payload: { type: 'boolean' } },
  summary: 'show one rejected message; its arguments, options and stack only with --payload',
  async run(input, io) {
    const id = uuidOperand(input.operands[0], 'message id')
    const payload = input.values.payload === true
    return withBroker(input.global, io, async (broker) => {
      const failed = await broker.showFailed(id, { payload })
      if (failed) {
        printJson(io, failed)
        return EXIT.ok
      }
      // showFailed does not say why; one more read tells missing from not rejected.
      const { state } = await broker.cancellationStatus(id)
      // The same { id, status } as retry and cancel print, so scripts need not parse stderr.
      if (state === null) {
        printJson(io, { id, status: 'missing' })
        io.err(`iddqueue failed show: no message ${id}\n`)
        return EXIT.notFound
      }
      printJson(io, { id, status: 'not-rejected', state })
      io.err(`iddqueue failed show: message ${id} is ${state}, not rejected\n`)
      return EXIT.wrongState
    })
  },
}
