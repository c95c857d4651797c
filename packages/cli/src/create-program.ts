import { Command as Commander, type CommanderError, Option } from 'commander'
import { type CliIo, EXIT } from './cli-io.js'
import type { Command } from './command.js'
import { COMMANDS } from './commands/all-commands.js'
import { commandUsage, groupUsage, usage } from './usage.js'
import { UsageError } from './usage-error.js'

/** @internal What parsing the command line came to: a command to run, or an exit code. */
export type ParseOutcome =
  | { readonly kind: 'run'; readonly command: Command; readonly parsed: Commander }
  | { readonly kind: 'exit'; readonly code: number }

/**
 * @internal A commander error, with the `iddqueue` command it happened in
 * (`failed list`, or empty for the top level), thrown out of commander's
 * exit override so `main` can print it our way.
 */
export class ParseError extends Error {
  constructor(
    readonly where: string,
    readonly error: CommanderError | UsageError,
  ) {
    super(error.message, { cause: error })
  }
}

/**
 * @internal The global options, declared on the program: commander reads
 * them before or after the command. The `<value>` placeholder shows in
 * commander's "argument missing" message.
 */
export const GLOBAL_OPTIONS = ['url', 'schema', 'prefix'] as const

/**
 * @internal Builds the commander program of every command in
 * {@link COMMANDS}: groups (`failed`, `history`, `sql`) become commander
 * commands with subcommands, each command's options become commander
 * options, `--json` and `-h, --help` are on every command, and `help
 * [command...]` prints any command's help. The chosen command is reported
 * through `onParsed`, not run, so `main` owns errors and exit codes.
 */
export function createProgram(io: CliIo, onParsed: (outcome: ParseOutcome) => void): Commander {
  const help = new Map<Commander, () => string>()
  const program = new Commander('iddqueue')
    .configureOutput({ writeOut: io.out, writeErr: io.err, outputError: () => {} })
    .configureHelp({ formatHelp: (command) => help.get(command)?.() ?? '' })
    .helpCommand(false)
    .allowExcessArguments(true)
  for (const name of GLOBAL_OPTIONS) program.addOption(new Option(`--${name} <value>`))
  catchErrors(program, '')
  help.set(program, usage)
  program.action((_options, self: Commander) => {
    const [name] = self.args
    if (name === undefined) {
      io.err(usage())
      onParsed({ kind: 'exit', code: EXIT.usage })
    } else throw new ParseError('', new UsageError(`unknown command ${JSON.stringify(name)}`))
  })

  const groups = new Map<string, Commander>()
  for (const command of COMMANDS.values()) {
    const words = command.name.split(' ')
    let parent = program
    if (words.length === 2) parent = group(words[0]!)
    const leaf = parent.command(words.at(-1)!).description(command.summary)
    catchErrors(leaf, command.name)
    help.set(leaf, () => commandUsage(command))
    for (const [key, spec] of Object.entries(command.options ?? {})) {
      const flags = spec.type === 'string' ? `--${key} <value>` : `--${key}`
      leaf.addOption(new Option(flags))
    }
    leaf.option('--json').action((_options, parsed: Commander) => {
      onParsed({ kind: 'run', command, parsed })
    })
  }

  const helpCommand = program
    .command('help')
    .description('print the help of the CLI or of one command')
    .action((_options, self: Commander) => {
      let target = program
      for (const word of self.args) {
        const next = target.commands.find((command) => command.name() === word)
        if (!next) {
          const name = self.args.join(' ')
          throw new ParseError('help', new UsageError(`unknown command ${JSON.stringify(name)}`))
        }
        target = next
      }
      io.out(help.get(target)!())
      onParsed({ kind: 'exit', code: EXIT.ok })
    })
  catchErrors(helpCommand, 'help')
  help.set(
    helpCommand,
    () =>
      `usage: iddqueue help [COMMAND]\n  the usage of the CLI, a group (\`help failed\`) or a command (\`help failed list\`)\n`,
  )

  return program

  /** The commander command of a group, created with its first subcommand. */
  function group(name: string): Commander {
    let found = groups.get(name)
    if (found) return found
    found = program.command(name)
    groups.set(name, found)
    const subcommands = [...COMMANDS.values()].filter((c) => c.name.startsWith(`${name} `))
    catchErrors(found, name)
    help.set(found, () => groupUsage(name, subcommands))
    found.action((_options, self: Commander) => {
      const expected = subcommands.map((c) => JSON.stringify(c.name.split(' ')[1])).join(' or ')
      const got = JSON.stringify(self.args[0] ?? '')
      throw new ParseError(name, new UsageError(`expected ${expected}, got ${got}`))
    })
    return found
  }
}

/**
 * Makes commander throw instead of exiting the process, naming the command
 * the error belongs to; `--help` comes through as exit code 0.
 */
function catchErrors(command: Commander, where: string): void {
  command.exitOverride((error) => {
    throw new ParseError(where, error)
  })
}
