import type { CliIo } from './cli-io.js'
import type { GlobalOptions } from './global-options.js'

/** @internal One option of a command, as its usage shows it. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean'
  /** The placeholder of a string option's value in the usage: `N`, `Q`, `ID`. */
  readonly value?: string
  /** The command refuses to run without it. */
  readonly required?: boolean
}

/** @internal What a command receives, once its arguments parsed. */
export interface CommandInput {
  readonly global: GlobalOptions
  /** The positional arguments, as many as the command declares. */
  readonly operands: readonly string[]
  /** The command's own options (strings and booleans), unchecked beyond their type. */
  readonly values: Readonly<Record<string, string | boolean | undefined>>
  /** `--json`: print JSON instead of a report for people. */
  readonly json: boolean
  /** The global options given on the command line (not defaulted, nor `url` from `DATABASE_URL`). */
  readonly given: ReadonlySet<keyof GlobalOptions>
}

/**
 * @internal A command of the `iddqueue` binary: its name, what it takes, and
 * what it does. `main` parses and checks the arguments against this, so a
 * command's `run` starts with well-formed input.
 */
export interface Command {
  /** How it is called: `retry`, or `failed list` for a subcommand. */
  readonly name: string
  /** Its positional arguments as the usage shows them: `ID`, or `[QUEUE]` when optional. */
  readonly operands?: readonly string[]
  /** Its own options, besides the global ones and `--json`. */
  readonly options?: Readonly<Record<string, OptionSpec>>
  /** One line for the usage. */
  readonly summary: string
  /** False for a command that never connects. Default true. */
  readonly database?: boolean
  run(input: CommandInput, io: CliIo): Promise<number>
}

/** @internal `failed list [--queue Q] [--limit N]`: the synopsis of a command for its usage. */
export function synopsis(command: Command): string {
  const options = Object.entries(command.options ?? {}).map(([name, spec]) => {
    const text = spec.type === 'string' ? `--${name} ${spec.value ?? 'VALUE'}` : `--${name}`
    return spec.required ? text : `[${text}]`
  })
  return [command.name, ...(command.operands ?? []), ...options].join(' ')
}
