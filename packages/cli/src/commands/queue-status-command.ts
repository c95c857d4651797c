import { queueName } from '../arguments.js'
import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withBroker } from '../with-broker.js'

/**
 * @internal `iddqueue queue-status QUEUE` prints `{ queue, paused }`;
 * without a queue, `{ paused: [...] }`, every paused queue.
 */
export const queueStatusCommand: Command = {
  name: 'queue-status',
  operands: ['[QUEUE]'],
  summary: 'whether a queue is paused, or every paused queue (JSON)',
  async run(input, io) {
    const queue = queueName(input.operands[0])
    await withBroker(input.global, io, async (broker) => {
      if (queue === undefined) printJson(io, { paused: await broker.pausedQueues() })
      else printJson(io, { queue, paused: await broker.isPaused(queue) })
    })
    return EXIT.ok
  },
}
