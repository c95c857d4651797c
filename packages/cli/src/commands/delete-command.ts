import type { TerminalState } from '@iddqueue/core'
import { stringOption } from '../arguments.js'
import { BULK_OPTIONS, bulkArguments, timeOption } from '../bulk-arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { plural } from '../plural.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue delete --all [--queue Q] [--actor A] [--state S,...]
 * [--finished-before TIME] [--dry-run]` deletes finished messages in
 * batches, with progress on stderr, and prints `{ deleted, dryRun }`.
 */
export const deleteCommand: Command = {
  name: 'delete',
  options: {
    ...BULK_OPTIONS,
    state: { type: 'string', value: 'S' },
    'finished-before': { type: 'string', value: 'TIME' },
  },
  summary:
    'delete the done, rejected and cancelled messages the filters match (--all required; --state done,rejected,cancelled), in batches; --dry-run only counts (JSON)',
  async run(input, io) {
    const filter = bulkArguments(input, 'delete')
    const state = stringOption(input, 'state')
    const finishedBefore = timeOption(input, 'finished-before')
    const result = await withBroker(input.global, io, (broker) =>
      broker.deleteMessages({
        ...filter,
        ...(state === undefined ? {} : { state: state.split(',') as TerminalState[] }),
        ...(finishedBefore === undefined ? {} : { finishedBefore }),
        onProgress: ({ deleted }) => io.err(`deleting: ${plural(deleted, 'message')} so far\n`),
      }),
    )
    if (result.dryRun) io.err(`dry run: ${plural(result.deleted, 'message')} would be deleted\n`)
    printJson(io, result)
    return EXIT.ok
  },
}
