import { integerOption, queueName, stringOption } from './arguments.js'
import type { CommandInput, OptionSpec } from './command.js'
import { UsageError } from './usage-error.js'

/** @internal The options every bulk form takes (`failed retry --all`, `cancel --all`, `delete --all`). */
export const BULK_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  all: { type: 'boolean' },
  queue: { type: 'string', value: 'Q' },
  actor: { type: 'string', value: 'A' },
  'dry-run': { type: 'boolean' },
  'batch-size': { type: 'string', value: 'N' },
}

/** @internal The filter options of a bulk command, checked; `--all` must be given. */
export function bulkArguments(input: CommandInput, command: string) {
  if (input.values.all !== true) {
    throw new UsageError(`${command} needs an ID, or --all (narrowed by the filters) for many`)
  }
  const queue = queueName(stringOption(input, 'queue'))
  const actor = stringOption(input, 'actor')
  const batchSize = integerOption(input, 'batch-size')
  return {
    ...(queue === undefined ? {} : { queue }),
    ...(actor === undefined ? {} : { actor }),
    ...(batchSize === undefined ? {} : { batchSize }),
    dryRun: input.values['dry-run'] === true,
  }
}

/** @internal Refuses bulk-only options beside an ID. */
export function refuseBulkOptions(input: CommandInput, command: string, names: readonly string[]) {
  for (const name of ['all', ...Object.keys(BULK_OPTIONS), ...names]) {
    if (input.values[name] !== undefined) {
      throw new UsageError(`${command}: --${name} selects many messages; not with an ID`)
    }
  }
}

/** The first and last times a time option takes, as core's bulk filters: years 1 to 9999. */
const EARLIEST = '0001-01-01T00:00:00Z'
const LATEST = '9999-12-31T23:59:59.999Z'

/**
 * @internal A time option: an ISO 8601 date-time or epoch milliseconds, from
 * year 1 to 9999. JavaScript reads times up to year 275760, which PostgreSQL
 * cannot take as a filter: those are usage errors here, naming the argument.
 */
export function timeOption(input: CommandInput, name: string): Date | undefined {
  const value = stringOption(input, name)
  if (value === undefined) return undefined
  const date = /^\d+$/.test(value) ? new Date(Number(value)) : new Date(value)
  const ms = date.getTime()
  if (!(ms >= Date.parse(EARLIEST) && ms <= Date.parse(LATEST))) {
    throw new UsageError(
      `invalid --${name} ${JSON.stringify(value)}: expected an ISO 8601 time (such as 2030-01-01T00:00:00Z) or epoch milliseconds, from ${EARLIEST} to ${LATEST}`,
    )
  }
  return date
}
