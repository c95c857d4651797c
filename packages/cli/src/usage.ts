import type { Command } from './command.js'
import { synopsis } from './command.js'
import { SECTIONS } from './commands/all-commands.js'

const GLOBAL = 'iddqueue [--url URL] [--schema NAME] [--prefix PREFIX]'

/** @internal The usage of the whole CLI. */
export function usage(): string {
  const sections = SECTIONS.map(
    (section) =>
      `${section.title}:\n${section.commands.map((c) => `  ${synopsis(c)}\n      ${c.summary}\n`).join('')}`,
  )
  return `usage: ${GLOBAL} <command> [arguments] [--json]

${sections.join('\n')}
iddqueue help COMMAND (or iddqueue COMMAND --help) prints one command's usage.
--url defaults to DATABASE_URL; --schema to iddqueue; --prefix to none.
--json prints JSON on stdout where a command would print a report for people.

exit codes: 0 success; 1 the operation failed (or check found drift); 2 bad usage;
3 no such message; 4 the message is not in a state the command acts on; 5 busy, try again.
`
}

/** @internal The usage of a group of commands, such as `failed`. */
export function groupUsage(name: string, commands: readonly Command[]): string {
  const lines = commands.map((c) => `  ${synopsis(c)}\n      ${c.summary}\n`).join('')
  return `usage: ${GLOBAL} ${name} <command> [arguments] [--json]\n\n${lines}`
}

/** @internal The usage of one command. */
export function commandUsage(command: Command): string {
  return `usage: ${GLOBAL} ${synopsis(command)} [--json]\n  ${command.summary}\n`
}
