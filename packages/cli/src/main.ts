import { parseArgs } from 'node:util'
import { IddqueueError } from '@iddqueue/schema'
import { type CliIo, EXIT, processIo } from './cli-io.js'
import { checkCommand, migrateCommand } from './commands/migrate-command.js'
import { sqlCommand } from './commands/sql-command.js'

const COMMANDS = ['sql', 'migrate', 'check']

const USAGE = `usage: iddqueue [--url URL] [--schema NAME] [--prefix PREFIX] <command>

commands:
  sql init        print the whole schema as SQL, for a DBA to review and apply
  sql upgrade     print only the migrations the database lacks
  migrate         apply pending migrations (prints JSON)
  check           compare the live schema with the migrations (prints JSON; exit 1 on drift)

--url defaults to DATABASE_URL. Exit codes: 0 success, 1 failure or drift, 2 bad usage.
`

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns
 * the exit code.
 *
 * @example
 * process.exitCode = await main(['sql', 'init'])
 */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${USAGE}`)
    return EXIT.usage
  }
  const { values, positionals } = parsed
  if (values.help || positionals.length === 0) {
    io.err(USAGE)
    return values.help ? EXIT.ok : EXIT.usage
  }
  const [command, ...rest] = positionals
  if (!COMMANDS.includes(command!)) {
    io.err(`iddqueue: unknown command ${JSON.stringify(command)}\n\n${USAGE}`)
    return EXIT.usage
  }
  const url = values.url ?? io.env.DATABASE_URL ?? ''
  const options = { url, schema: values.schema ?? 'iddqueue', prefix: values.prefix ?? '' }
  const needsUrl = command !== 'sql' || rest[0] === 'upgrade'
  if (needsUrl && !url) {
    io.err(`iddqueue ${command}: no database; pass --url or set DATABASE_URL\n`)
    return EXIT.usage
  }
  try {
    switch (command) {
      case 'sql':
        return await sqlCommand(rest, options, io)
      case 'migrate':
        return await migrateCommand(options, io)
      case 'check':
        return await checkCommand(options, io)
      default:
        io.err(`iddqueue: unknown command ${JSON.stringify(command)}\n\n${USAGE}`)
        return EXIT.usage
    }
  } catch (error) {
    const usage =
      IddqueueError.isInstance(error) && (error as Error).name === 'InvalidIdentifierError'
    io.err(`iddqueue ${command}: ${(error as Error).message}\n`)
    return usage ? EXIT.usage : EXIT.failed
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      url: { type: 'string' },
      schema: { type: 'string' },
      prefix: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}
