import type { PurgeResult } from '@iddqueue/core'
import { integerOption } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { PLUGINS_OPTION } from '../plugin-migrations.js'
import { pluginPurgers } from '../plugin-purgers.js'
import { plural } from '../plural.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue purge` deletes finished messages older than
 * `--older-than-ms` (default 30 days) and expired deduplication keys, in
 * batches, with progress on stderr; with `--plugins @iddqueue/coordination`,
 * also the coordination plugin's expired rows (its `purge()`).
 */
export const purgeCommand: Command = {
  name: 'purge',
  options: {
    'older-than-ms': { type: 'string', value: 'N' },
    'batch-size': { type: 'string', value: 'N' },
    ...PLUGINS_OPTION,
  },
  summary:
    'delete done, rejected and cancelled messages older than --older-than-ms (default 30 days) and expired deduplication keys (and, with --plugins @iddqueue/coordination, expired coordination rows)',
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
    const purgers = await pluginPurgers(input.values.plugins, io.cwd ?? process.cwd())
    const { result, plugins } = await withBroker(
      input.global,
      io,
      async (broker) => {
        const result = await broker.purge({
          ...(olderThanMs === undefined ? {} : { olderThanMs }),
          ...(batchSize === undefined ? {} : { batchSize }),
          onProgress,
        })
        const plugins: number[] = []
        if (purgers.length > 0) await broker.ready() // sets the plugins up
        for (const purger of purgers) plugins.push(await purger.purge(batchSize))
        return { result, plugins }
      },
      purgers.map((purger) => purger.plugin),
    )
    const { messages, deduplicationKeys } = result
    const extra = Object.fromEntries(purgers.map((purger, i) => [purger.key, plugins[i]!]))
    if (input.json) printJson(io, { messages, deduplicationKeys, ...extra })
    else {
      io.out(
        `purged ${plural(messages, 'message')} and ${plural(deduplicationKeys, 'deduplication key')}\n`,
      )
      for (const [i, purger] of purgers.entries())
        io.out(`purged ${plural(plugins[i]!, purger.label)}\n`)
    }
    return EXIT.ok
  },
}
