import {
  BrokerConnectionError,
  IddqueueError,
  InvalidIdentifierError,
  InvalidOptionError,
  isConnectionError,
  SchemaNotReadyError,
} from '@iddqueue/core'
import { type Command as Commander, CommanderError } from 'commander'
import { type CliIo, EXIT, processIo } from './cli-io.js'
import type { Command, CommandInput } from './command.js'
import { COMMANDS } from './commands/all-commands.js'
import { createProgram, GLOBAL_OPTIONS, ParseError, type ParseOutcome } from './create-program.js'
import type { GlobalOptions } from './global-options.js'
import { commandUsage } from './usage.js'
import { UsageError } from './usage-error.js'

const HELP_HINT = 'run `iddqueue help` for the commands and options\n'

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
  // Set by the action of the command commander chose (a cast: TypeScript cannot see the callback assign it).
  let outcome = { kind: 'exit', code: EXIT.ok } as ParseOutcome
  const program = createProgram(io, (parsed) => {
    outcome = parsed
  })
  try {
    await program.parseAsync([...argv], { from: 'user' })
  } catch (error) {
    if (error instanceof ParseError) return parseFailure(io, error)
    throw error
  }
  if (outcome.kind === 'exit') return outcome.code
  const { command, parsed } = outcome
  let global: GlobalOptions | undefined
  try {
    const input = commandInput(command, parsed, io)
    global = input.global
    return await command.run(input, io)
  } catch (error) {
    return report(io, command, error, global)
  }
}

/** Prints what was wrong with the command line, or returns 0 after `--help`. */
function parseFailure(io: CliIo, { where, error }: ParseError): number {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed') return EXIT.ok
    if (error.code === 'commander.help') return EXIT.usage
  }
  // Commander's messages read "error: unknown option '--x'\n(Did you mean --y?)";
  // ours start with the command and keep to one line.
  const text = error.message
    .replace(/^error: /, '')
    .replace(/\n\(Did you mean (.*)\)$/, ' (did you mean $1)')
  const message = text.charAt(0).toUpperCase() + text.slice(1)
  const command = COMMANDS.get(where)
  const after = command ? commandUsage(command) : where === '' ? HELP_HINT : ''
  io.err(
    `iddqueue${where ? ` ${where}` : ''}: ${UsageError.isInstance(error) ? text : message}\n${after}`,
  )
  return EXIT.usage
}

/** Checks a parsed command's operands and options and gathers what `run` receives. */
function commandInput(command: Command, parsed: Commander, io: CliIo): CommandInput {
  const positionals = parsed.args
  const declared = command.operands ?? []
  const required = declared.filter((operand) => !operand.startsWith('['))
  if (positionals.length < required.length)
    throw new UsageError(`missing ${required[positionals.length]}`)
  if (positionals.length > declared.length)
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[declared.length])}`)
  const values: Record<string, string | boolean | undefined> = {}
  for (const option of parsed.options)
    values[option.long!.slice(2)] = parsed.getOptionValue(option.attributeName())
  for (const [key, spec] of Object.entries(command.options ?? {})) {
    if (spec.required && values[key] === undefined)
      throw new UsageError(`missing --${key} ${spec.value ?? ''}`.trimEnd())
  }
  const globals = parsed.optsWithGlobals<{ url?: string; schema?: string; prefix?: string }>()
  const global: GlobalOptions = {
    url: globals.url ?? io.env.DATABASE_URL ?? '',
    schema: globals.schema ?? 'iddqueue',
    prefix: globals.prefix ?? '',
  }
  if (command.database !== false && !global.url)
    throw new UsageError('no database; pass --url or set DATABASE_URL')
  if (command.database !== false) {
    // The URL may hold a password: never echo it (its scheme is safe to name).
    const url = URL.parse(global.url)
    const expected = 'expected postgres://user@host:port/database'
    if (!url) throw new UsageError(`invalid database URL: ${expected}`)
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
      throw new UsageError(`invalid database URL: ${expected}, got a ${url.protocol} URL`)
  }
  const given = new Set(GLOBAL_OPTIONS.filter((name) => globals[name] !== undefined))
  return { global, operands: positionals, values, json: values.json === true, given }
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
    InvalidIdentifierError.isInstance(error)
  if (badUsage) {
    io.err(`${prefix} ${message}\n${commandUsage(command)}`)
    return EXIT.usage
  }
  if (SchemaNotReadyError.isInstance(error) || code === '42P01') {
    const where = global ? ` in schema ${JSON.stringify(global.schema)}` : ''
    const withPrefix = global?.prefix ? ` with prefix ${JSON.stringify(global.prefix)}` : ''
    io.err(
      `${prefix} the iddqueue tables do not exist${where}${withPrefix}; run \`${migrateCommandLine(global)}\` first\n`,
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

/** `iddqueue --schema jobs --prefix app_ migrate`: the migrate command for the namespace used. */
function migrateCommandLine(global: GlobalOptions | undefined): string {
  const words = ['iddqueue']
  if (global && global.schema !== 'iddqueue') words.push('--schema', shellWord(global.schema))
  if (global?.prefix) words.push('--prefix', shellWord(global.prefix))
  return [...words, 'migrate'].join(' ')
}

/** A word as a POSIX shell reads it back. */
function shellWord(word: string): string {
  return /^[\w.:/-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`
}

/** Says where an error that is not iddqueue's own came from. */
function origin(error: unknown): string {
  if (IddqueueError.isInstance(error)) return ''
  if (error instanceof Error && error.name === 'PostgresError') return 'PostgreSQL: '
  return error instanceof Error ? `${error.name}: ` : ''
}
