import { stringOption } from '../arguments.js'
import { BULK_OPTIONS, bulkArguments, refuseBulkOptions, timeOption } from '../bulk-arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { plural } from '../plural.js'
import { withBroker } from '../with-broker.js'
import { retryCommand } from './retry-command.js'

const FILTERS = ['error-type', 'failed-before']

/**
 * @internal `iddqueue failed retry ID` retries one rejected message (as
 * `retry ID`); `iddqueue failed retry --all [--queue Q] [--actor A]
 * [--error-type T] [--failed-before TIME] [--dry-run]` retries every
 * matching one in batches, with progress on stderr, and prints
 * `{ retried, dryRun }`.
 */
export const failedRetryCommand: Command = {
  name: 'failed retry',
  operands: ['[ID]'],
  options: {
    ...BULK_OPTIONS,
    'error-type': { type: 'string', value: 'T' },
    'failed-before': { type: 'string', value: 'TIME' },
  },
  summary:
    'retry one rejected message, or with --all every one the filters match, in batches; --dry-run only counts (JSON)',
  async run(input, io) {
    if (input.operands[0] !== undefined) {
      refuseBulkOptions(input, 'failed retry', FILTERS)
      return retryCommand.run(input, io)
    }
    const filter = bulkArguments(input, 'failed retry')
    const errorType = stringOption(input, 'error-type')
    const failedBefore = timeOption(input, 'failed-before')
    const result = await withBroker(input.global, io, (broker) =>
      broker.retryFailed({
        ...filter,
        ...(errorType === undefined ? {} : { errorType }),
        ...(failedBefore === undefined ? {} : { failedBefore }),
        onProgress: ({ retried }) => io.err(`retrying: ${plural(retried, 'message')} so far\n`),
      }),
    )
    if (result.dryRun) io.err(`dry run: ${plural(result.retried, 'message')} would be retried\n`)
    printJson(io, result)
    return EXIT.ok
  },
}
