import { type ParseArgsConfig, parseArgs } from 'node:util'
import {
  BrokerConnectionError,
  IddqueueError,
  InvalidIdentifierError,
  InvalidOptionError,
  isConnectionError,
  SchemaNotReadyError,
} from '@iddqueue/core'
import { type CliIo, EXIT, processIo } from './cli-io.js'
import type { Command, CommandInput } from './command.js'
import { COMMANDS } from './commands/all-commands.js'
import { GLOBAL_OPTION_SPECS, type GlobalOptions } from './global-options.js'
import { commandUsage, usage } from './usage.js'
import { UsageError } from './usage-error.js'

const HELP_HINT = 'run `iddqueue --help` for the commands and options\n'

/** Command groups (`failed`, `history`, `sql`) and their subcommands. */
const GROUPS = new Map<string, string[]>()
for (const name of COMMANDS.keys()) {
  const [group, sub] = name.split(' ')
  if (sub) GROUPS.set(group!, [...(GROUPS.get(group!) ?? []), sub])
}

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns
 * the exit code (see {@link EXIT}): results go to `io.out`, progress and
 * errors to `io.err`.
 *
 * @example
 * import { main } from '@iddqueue/cli'
 *
 * process.exitCode = await main(['--schema', 'jobs', 'failed', 'list', '--queue', 'emails'])
 */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  // Global options come before the command: the first positional is the command.
  const { tokens } = parseArgs({
    args: [...argv],
    options: GLOBAL_OPTION_SPECS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  })
  const start = tokens.find((token) => token.kind === 'positional')?.index ?? argv.length
  let globals: { url?: string; schema?: string; prefix?: string; help?: boolean }
  try {
    globals = parseArgs({ args: argv.slice(0, start), options: GLOBAL_OPTION_SPECS }).values
  } catch (error) {
    io.err(`iddqueue: ${(error as Error).message}\n${HELP_HINT}`)
    return EXIT.usage
  }
  if (globals.help) {
    io.out(usage())
    return EXIT.ok
  }
  let name = argv[start]
  if (name === undefined) {
    io.err(usage())
    return EXIT.usage
  }
  let rest = argv.slice(start + 1)
  const subcommands = GROUPS.get(name)
  if (subcommands) {
    const [sub] = rest
    if (sub === undefined || !subcommands.includes(sub)) {
      const expected = subcommands.map((s) => JSON.stringify(s)).join(' or ')
      io.err(`iddqueue ${name}: expected ${expected}, got ${JSON.stringify(sub ?? '')}\n`)
      return EXIT.usage
    }
    name = `${name} ${sub}`
    rest = rest.slice(1)
  }
  const command = COMMANDS.get(name)
  if (!command) {
    io.err(`iddqueue: unknown command ${JSON.stringify(name)}\n${HELP_HINT}`)
    return EXIT.usage
  }
  let global: GlobalOptions | undefined
  try {
    const input = parseCommand(command, rest, globals, io)
    if (input === 'help') {
      io.out(commandUsage(command))
      return EXIT.ok
    }
    global = input.global
    return await command.run(input, io)
  } catch (error) {
    return report(io, command, error, global)
  }
}

/** Parses and checks a command's arguments, or says the user asked for its help. */
function parseCommand(
  command: Command,
  args: readonly string[],
  globals: { url?: string; schema?: string; prefix?: string },
  io: CliIo,
): CommandInput | 'help' {
  const options: NonNullable<ParseArgsConfig['options']> = {
    // Global options after the command are accepted too.
    ...GLOBAL_OPTION_SPECS,
    json: { type: 'boolean' },
  }
  for (const [key, spec] of Object.entries(command.options ?? {}))
    options[key] = { type: spec.type }
  const { values, positionals } = parseArgs({ args: [...args], options, allowPositionals: true })
  if (values.help) return 'help'
  const declared = command.operands ?? []
  const required = declared.filter((operand) => !operand.startsWith('['))
  if (positionals.length < required.length)
    throw new UsageError(`missing ${required[positionals.length]}`)
  if (positionals.length > declared.length)
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[declared.length])}`)
  for (const [key, spec] of Object.entries(command.options ?? {})) {
    if (spec.required && values[key] === undefined)
      throw new UsageError(`missing --${key} ${spec.value ?? ''}`.trimEnd())
  }
  const text = (key: string) => (typeof values[key] === 'string' ? values[key] : undefined)
  const global: GlobalOptions = {
    url: text('url') ?? globals.url ?? io.env.DATABASE_URL ?? '',
    schema: text('schema') ?? globals.schema ?? 'iddqueue',
    prefix: text('prefix') ?? globals.prefix ?? '',
  }
  if (command.database !== false && !global.url)
    throw new UsageError('no database; pass --url or set DATABASE_URL')
  // The URL may hold a password: never echo it.
  if (command.database !== false && !URL.canParse(global.url))
    throw new UsageError('invalid database URL: expected postgres://user@host:port/database')
  return {
    global,
    operands: positionals,
    values: values as Record<string, string | boolean | undefined>,
    json: values.json === true,
  }
}

/** Prints why a command failed and returns its exit code. */
function report(
  io: CliIo,
  command: Command,
  error: unknown,
  global: GlobalOptions | undefined,
): number {
  const prefix = `iddqueue ${command.name}:`
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown } | null)?.code
  const badUsage =
    UsageError.isInstance(error) ||
    InvalidOptionError.isInstance(error) ||
    InvalidIdentifierError.isInstance(error) ||
    (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))
  if (badUsage) {
    io.err(`${prefix} ${message}\n${commandUsage(command)}`)
    return EXIT.usage
  }
  if (SchemaNotReadyError.isInstance(error) || code === '42P01') {
    const where = global ? ` in schema ${JSON.stringify(global.schema)}` : ''
    const withPrefix = global?.prefix ? ` with prefix ${JSON.stringify(global.prefix)}` : ''
    io.err(
      `${prefix} the iddqueue tables do not exist${where}${withPrefix}; run \`iddqueue migrate\` first\n`,
    )
    return EXIT.failed
  }
  if (isConnectionError(error) && !BrokerConnectionError.isInstance(error)) {
    io.err(`${prefix} PostgreSQL is unreachable (${message})\n`)
    return EXIT.failed
  }
  io.err(`${prefix} ${origin(error)}${message}\n`)
  return EXIT.failed
}

/** Says where an error that is not iddqueue's own came from. */
function origin(error: unknown): string {
  if (IddqueueError.isInstance(error)) return ''
  if (error instanceof Error && error.name === 'PostgresError') return 'PostgreSQL: '
  return error instanceof Error ? `${error.name}: ` : ''
}
