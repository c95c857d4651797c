import { type GrantMode, generateGrantsSql } from '@iddqueue/schema'
import { stringOption } from '../arguments.js'
import { EXIT } from '../cli-io.js'
import type { Command } from '../command.js'
import { UsageError } from '../usage-error.js'

const MODES: readonly GrantMode[] = ['producer', 'worker', 'admin']

/**
 * @internal `iddqueue sql grants --role R --mode producer|worker|admin`
 * prints the least-privilege grants for a role; it needs no database.
 */
export const sqlGrantsCommand: Command = {
  name: 'sql grants',
  summary:
    'print the grants a role needs as producer, worker or admin (no DDL), for a DBA to review and apply',
  database: false,
  options: {
    role: { type: 'string', value: 'ROLE', required: true },
    mode: { type: 'string', value: 'producer|worker|admin', required: true },
  },
  async run({ global, ...input }, io) {
    const role = stringOption({ global, ...input }, 'role')!
    const mode = stringOption({ global, ...input }, 'mode')!
    if (!MODES.includes(mode as GrantMode)) {
      throw new UsageError(
        `invalid --mode ${JSON.stringify(mode)}: expected producer, worker or admin`,
      )
    }
    io.out(
      generateGrantsSql({
        role,
        mode: mode as GrantMode,
        namespace: { schema: global.schema, prefix: global.prefix },
      }),
    )
    return EXIT.ok
  },
}
