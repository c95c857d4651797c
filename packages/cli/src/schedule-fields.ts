import type { ScheduleDefinition } from '@iddqueue/scheduler'
import { integerOption, queueName, stringOption } from './arguments.js'
import type { CommandInput, OptionSpec } from './command.js'
import { UsageError } from './usage-error.js'

/** @internal The options `schedule create` and `schedule update` share. */
export const SCHEDULE_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  queue: { type: 'string', value: 'Q' },
  'every-ms': { type: 'string', value: 'N' },
  cron: { type: 'string', value: 'EXPR' },
  timezone: { type: 'string', value: 'TZ' },
  args: { type: 'string', value: 'JSON' },
  priority: { type: 'string', value: 'N' },
  'start-at': { type: 'string', value: 'ISO' },
  'end-at': { type: 'string', value: 'ISO' },
  'catch-up': { type: 'string', value: 'latest|N' },
  'catch-up-within-ms': { type: 'string', value: 'N' },
  overlap: { type: 'string', value: 'allow|skip' },
  disabled: { type: 'boolean' },
}

type Fields = { -readonly [K in keyof ScheduleDefinition]?: ScheduleDefinition[K] }

/**
 * @internal The definition fields given on the command line; the scheduler
 * checks their values (a bad one exits 2 with its message).
 */
export function scheduleFields(input: CommandInput): Fields {
  const fields: Fields = {}
  const queue = queueName(stringOption(input, 'queue'))
  if (queue !== undefined) fields.queue = queue
  const everyMs = integerOption(input, 'every-ms')
  if (everyMs !== undefined) fields.everyMs = everyMs
  const cron = stringOption(input, 'cron')
  if (cron !== undefined) fields.cron = cron
  const timezone = stringOption(input, 'timezone')
  if (timezone !== undefined) fields.timezone = timezone
  const args = stringOption(input, 'args')
  if (args !== undefined) {
    let parsed: unknown
    try {
      parsed = JSON.parse(args)
    } catch {
      parsed = undefined
    }
    if (!Array.isArray(parsed)) {
      throw new UsageError(`invalid --args ${JSON.stringify(args)}: expected a JSON array`)
    }
    fields.args = parsed
  }
  const priority = stringOption(input, 'priority')
  if (priority !== undefined) {
    if (!/^-?\d+$/.test(priority)) {
      throw new UsageError(
        `invalid --priority ${JSON.stringify(priority)}: expected a whole number`,
      )
    }
    fields.priority = Number(priority)
  }
  const startAt = stringOption(input, 'start-at')
  if (startAt !== undefined) fields.startAt = startAt
  const endAt = stringOption(input, 'end-at')
  if (endAt !== undefined) fields.endAt = endAt
  const catchUp = stringOption(input, 'catch-up')
  const withinMs = integerOption(input, 'catch-up-within-ms')
  if (catchUp === 'latest') {
    if (withinMs !== undefined)
      throw new UsageError('--catch-up-within-ms needs --catch-up N (a backfill)')
    fields.catchUp = 'latest'
  } else if (catchUp !== undefined) {
    if (!/^\d+$/.test(catchUp)) {
      throw new UsageError(
        `invalid --catch-up ${JSON.stringify(catchUp)}: expected latest or a whole number of occurrences to backfill`,
      )
    }
    fields.catchUp =
      withinMs === undefined ? { max: Number(catchUp) } : { max: Number(catchUp), withinMs }
  } else if (withinMs !== undefined) {
    throw new UsageError('--catch-up-within-ms needs --catch-up N (a backfill)')
  }
  const overlap = stringOption(input, 'overlap')
  if (overlap !== undefined) fields.overlap = overlap as 'allow' | 'skip'
  if (input.values.disabled === true) fields.enabled = false
  return fields
}
