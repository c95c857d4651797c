import { attemptHistory } from '@iddqueue/core'
import { integerOption } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { plural } from '../plural.js'
import { withBroker } from '../with-broker.js'

/** @internal `iddqueue history purge --older-than-ms N` deletes attempts that started longer ago. */
export const historyPurgeCommand: Command = {
  name: 'history purge',
  options: { 'older-than-ms': { type: 'string', value: 'N', required: true } },
  summary:
    'delete recorded attempts that started more than --older-than-ms ago, incomplete ones included',
  async run(input, io) {
    const olderThanMs = integerOption(input, 'older-than-ms')!
    const history = attemptHistory()
    const deleted = await withBroker(
      input.global,
      io,
      async (broker) => {
        await broker.ready()
        return history.purgeAttempts({ olderThanMs })
      },
      [history],
    )
    if (input.json) printJson(io, { attempts: deleted })
    else io.out(`purged ${plural(deleted, 'attempt')}\n`)
    return EXIT.ok
  },
}
