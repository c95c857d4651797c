import { stringOption } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { plural } from '../plural.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue flush` deletes every queued message (delayed ones
 * included) of one queue, or of all; claimed and running ones stay.
 */
export const flushCommand: Command = {
  name: 'flush',
  options: { queue: { type: 'string', value: 'Q' } },
  summary: 'delete every queued message (delayed ones included) of a queue, or of all queues',
  async run(input, io) {
    const queue = stringOption(input, 'queue')
    const flushed = await withBroker(input.global, io, (broker) =>
      broker.flush(queue === undefined ? {} : { queue }),
    )
    if (input.json) printJson(io, { flushed })
    else io.out(`flushed ${plural(flushed, 'queued message')} from ${queue ?? 'every queue'}\n`)
    return EXIT.ok
  },
}
