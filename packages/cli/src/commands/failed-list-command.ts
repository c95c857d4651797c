import { integerOption, stringOption, uuidOption } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue failed list` prints a page of rejected messages as
 * `{ items, nextAfter }`; pass `nextAfter` as `--after`, with the same
 * filters, for the next page.
 */
export const failedListCommand: Command = {
  name: 'failed list',
  options: {
    queue: { type: 'string', value: 'Q' },
    actor: { type: 'string', value: 'A' },
    limit: { type: 'string', value: 'N' },
    after: { type: 'string', value: 'ID' },
  },
  summary: 'list rejected messages in id order, 50 a page (JSON; pass nextAfter as --after)',
  async run(input, io) {
    const options = {
      queue: stringOption(input, 'queue'),
      actor: stringOption(input, 'actor'),
      limit: integerOption(input, 'limit'),
      after: uuidOption(input, 'after'),
    }
    const page = await withBroker(input.global, io, (broker) => broker.listFailed(options))
    printJson(io, page)
    return EXIT.ok
  },
}
