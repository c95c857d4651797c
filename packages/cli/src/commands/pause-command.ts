import { integerOption } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue pause QUEUE` pauses a queue until resumed, waits for
 * its live workers to confirm, and prints `{ queue, paused, workers, acknowledged }`.
 */
export const pauseCommand: Command = {
  name: 'pause',
  operands: ['QUEUE'],
  options: { 'timeout-ms': { type: 'string', value: 'N' } },
  summary:
    'pause a queue until resumed; waits up to --timeout-ms (default 5000) for its workers to confirm (JSON)',
  async run(input, io) {
    const queue = input.operands[0]!
    const timeoutMs = integerOption(input, 'timeout-ms')
    const result = await withBroker(input.global, io, (broker) =>
      broker.pause(queue, timeoutMs === undefined ? {} : { timeoutMs }),
    )
    printJson(io, {
      queue: result.queue,
      paused: true,
      workers: result.workers,
      acknowledged: result.acknowledged,
    })
    return EXIT.ok
  },
}
