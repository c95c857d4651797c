import type { PurgeResult } from '@iddqueue/core'
import { integerOption } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { plural } from '../plural.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue purge` deletes finished messages older than
 * `--older-than-ms` (default 30 days) and expired deduplication keys, in
 * batches, with progress on stderr.
 */
export const purgeCommand: Command = {
  name: 'purge',
  options: {
    'older-than-ms': { type: 'string', value: 'N' },
    'batch-size': { type: 'string', value: 'N' },
  },
  summary:
    'delete done, rejected and cancelled messages older than --older-than-ms (default 30 days) and expired deduplication keys',
  async run(input, io) {
    const olderThanMs = integerOption(input, 'older-than-ms')
    const batchSize = integerOption(input, 'batch-size')
    let reported = ''
    const onProgress = ({ messages, deduplicationKeys }: PurgeResult) => {
      const line = `purging: ${plural(messages, 'message')} and ${plural(deduplicationKeys, 'deduplication key')} deleted so far\n`
      // Each batch reports its totals; only a change is news.
      if (line !== reported && messages + deduplicationKeys > 0) io.err(line)
      reported = line
    }
    const result = await withBroker(input.global, io, (broker) =>
      broker.purge({
        ...(olderThanMs === undefined ? {} : { olderThanMs }),
        ...(batchSize === undefined ? {} : { batchSize }),
        onProgress,
      }),
    )
    const { messages, deduplicationKeys } = result
    if (input.json) printJson(io, { messages, deduplicationKeys })
    else
      io.out(
        `purged ${plural(messages, 'message')} and ${plural(deduplicationKeys, 'deduplication key')}\n`,
      )
    return EXIT.ok
  },
}
