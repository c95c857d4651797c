import { ScheduleNotFoundError } from '@iddqueue/scheduler'
import { type CliIo, EXIT, printJson } from '../cli-io.js'

/** @internal Runs `run`; a missing schedule prints `{ name, status: 'missing' }` and exits 3. */
export async function notFound(
  io: CliIo,
  command: string,
  name: string,
  run: () => Promise<number>,
): Promise<number> {
  try {
    return await run()
  } catch (error) {
    if (!ScheduleNotFoundError.isInstance(error)) throw error
    printJson(io, { name, status: 'missing' })
    io.err(`iddqueue ${command}: ${error.message}\n`)
    return EXIT.notFound
  }
}
