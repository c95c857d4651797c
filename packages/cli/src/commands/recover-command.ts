import { integerOption } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { plural } from '../plural.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue recover` requeues the messages held by workers that
 * stopped heartbeating, retry budgets intact.
 */
export const recoverCommand: Command = {
  name: 'recover',
  options: { 'stale-after-ms': { type: 'string', value: 'N' } },
  summary:
    'requeue messages held by workers silent for --stale-after-ms (default 6000) or unregistered',
  async run(input, io) {
    const staleAfterMs = integerOption(input, 'stale-after-ms')
    const recovered = await withBroker(input.global, io, (broker) =>
      broker.recover(staleAfterMs === undefined ? {} : { staleAfterMs }),
    )
    if (input.json) printJson(io, { recovered })
    else io.out(`recovered ${plural(recovered, 'message')}\n`)
    return EXIT.ok
  },
}
