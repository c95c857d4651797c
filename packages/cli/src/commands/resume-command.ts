import { EXIT, printJson } from '../cli-io.js'
import type { Command } from '../command.js'
import { withBroker } from '../with-broker.js'

/** @internal `iddqueue resume QUEUE` resumes a queue, waking its workers, and prints `{ queue, paused }`. */
export const resumeCommand: Command = {
  name: 'resume',
  operands: ['QUEUE'],
  summary: 'resume a paused queue and wake its workers; harmless when not paused (JSON)',
  async run(input, io) {
    const queue = input.operands[0]!
    await withBroker(input.global, io, (broker) => broker.resume(queue))
    printJson(io, { queue, paused: false })
    return EXIT.ok
  },
}
