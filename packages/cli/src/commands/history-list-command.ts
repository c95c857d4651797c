import { attemptHistory } from '@iddqueue/core'
import { integerOption, uuidOperand, uuidOption } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue history list ID` prints a page of a message's
 * attempts as `{ items, nextAfter }`, in id order.
 */
export const historyListCommand: Command = {
  name: 'history list',
  operands: ['ID'],
  options: {
    limit: { type: 'string', value: 'N' },
    after: { type: 'string', value: 'ATTEMPT_ID' },
  },
  summary: "list a message's recorded attempts, 50 a page (JSON; pass nextAfter as --after)",
  async run(input, io) {
    const id = uuidOperand(input.operands[0], 'message id')
    const limit = integerOption(input, 'limit')
    const after = uuidOption(input, 'after')
    const history = attemptHistory()
    const page = await withBroker(
      input.global,
      io,
      async (broker) => {
        await broker.ready()
        return history.listAttempts(id, { limit, after })
      },
      [history],
    )
    printJson(io, page)
    return EXIT.ok
  },
}
