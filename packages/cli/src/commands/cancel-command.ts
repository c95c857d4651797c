import { integerOption, stringOption, uuidOperand } from '../arguments.js'
import { BULK_OPTIONS, bulkArguments, refuseBulkOptions } from '../bulk-arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { plural } from '../plural.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue cancel ID` cancels a message and prints
 * `{ id, status, state }`: `cancelled`, `requested` (running: its signal
 * was aborted), `terminal` (already finished; nothing changed) or `missing`
 * (exit 3). `iddqueue cancel --all [--queue Q] [--actor A] [--state S]
 * [--dry-run]` cancels every matching queued or running message in
 * batches, with progress on stderr, and prints `{ cancelled, requested, dryRun }`.
 */
export const cancelCommand: Command = {
  name: 'cancel',
  operands: ['[ID]'],
  options: {
    'timeout-ms': { type: 'string', value: 'N' },
    ...BULK_OPTIONS,
    state: { type: 'string', value: 'S' },
  },
  summary:
    "cancel a message (for a claimed one, waits up to --timeout-ms, default 2000, for its worker's answer), or with --all every queued or running one the filters match (--state queued|consumed); --dry-run only counts (JSON)",
  async run(input, io) {
    if (input.operands[0] === undefined) return cancelMany(input, io)
    refuseBulkOptions(input, 'cancel', ['state'])
    const id = uuidOperand(input.operands[0], 'message id')
    const timeoutMs = integerOption(input, 'timeout-ms')
    const result = await withBroker(input.global, io, (broker) =>
      broker.cancel(id, timeoutMs === undefined ? {} : { timeoutMs }),
    )
    printJson(io, { id, ...result })
    if (result.status === 'missing') {
      io.err(`iddqueue cancel: no message ${id}\n`)
      return EXIT.notFound
    }
    if (result.status === 'terminal') {
      io.err(`iddqueue cancel: message ${id} is already ${result.state}; nothing changed\n`)
    }
    return EXIT.ok
  },
}

async function cancelMany(
  input: Parameters<Command['run']>[0],
  io: Parameters<Command['run']>[1],
): Promise<number> {
  const filter = bulkArguments(input, 'cancel')
  const state = stringOption(input, 'state')
  const result = await withBroker(input.global, io, (broker) =>
    broker.cancelMany({
      ...filter,
      ...(state === undefined ? {} : { state: state as 'queued' | 'consumed' }),
      onProgress: ({ cancelled, requested }) =>
        io.err(
          `cancelling: ${plural(cancelled, 'message')} cancelled, ${requested} requested so far\n`,
        ),
    }),
  )
  if (result.dryRun) {
    io.err(
      `dry run: ${plural(result.cancelled, 'message')} would be cancelled, ${result.requested} running would be asked to stop\n`,
    )
  }
  printJson(io, result)
  return EXIT.ok
}
