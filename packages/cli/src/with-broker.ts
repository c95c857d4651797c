import { type Broker, createBroker, type IddqueuePlugin } from '@iddqueue/core'
import type { CliIo } from './cli-io.js'
import { cliLogger } from './cli-logger.js'
import type { GlobalOptions } from './global-options.js'

/**
 * @internal Runs `use` with a broker on the command's namespace, and closes
 * the broker (and its pool) whatever happens. The pool is small: a command
 * runs one operation at a time, plus the LISTEN connection of `pause` and
 * `cancel`.
 */
export async function withBroker<T>(
  options: GlobalOptions,
  io: CliIo,
  use: (broker: Broker) => Promise<T>,
  plugins: readonly IddqueuePlugin[] = [],
): Promise<T> {
  const broker = createBroker({
    url: options.url,
    namespace: { schema: options.schema, prefix: options.prefix },
    poolSize: 2,
    logger: cliLogger(io),
    plugins,
  })
  try {
    return await use(broker)
  } finally {
    await broker.close()
  }
}
