import { queueStats } from '@iddqueue/metrics'
import { toNamespace } from '@iddqueue/schema'
import postgres from 'postgres'
import { queueName, stringOption } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { formatStats } from '../stats/format-stats.js'

/**
 * @internal `iddqueue stats` prints message counts by queue and state, as a
 * table, or with `--json` as `{ queues: [...] }` (`queueStats()` of
 * `@iddqueue/metrics`, plus `oldestReadySeconds`); `--estimate` reads it
 * with `retained: 'estimate'` (done and cancelled marked `~` in the table).
 */
export const statsCommand: Command = {
  name: 'stats',
  options: { queue: { type: 'string', value: 'Q' }, estimate: { type: 'boolean' } },
  summary:
    'message counts by queue and state, with ready, scheduled and the oldest ready age (a table; --json for JSON; --estimate: done and cancelled from a sample, fast at any retention)',
  async run(input, io) {
    const queue = queueName(stringOption(input, 'queue'))
    const namespace = toNamespace({ schema: input.global.schema, prefix: input.global.prefix })
    const sql = postgres(input.global.url, {
      max: 1,
      onnotice: () => {},
      connection: { application_name: 'iddqueue' },
    })
    try {
      const retained = input.values.estimate === true ? 'estimate' : 'exact'
      const stats = await queueStats(sql, { queue, namespace, retained })
      if (input.json) {
        printJson(io, {
          queues: stats.map((s) => ({ ...s, oldestReadySeconds: s.oldestReadyMs / 1000 })),
        })
      } else io.out(formatStats(stats))
      return EXIT.ok
    } finally {
      await sql.end()
    }
  },
}
