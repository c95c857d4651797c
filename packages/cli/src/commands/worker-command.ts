import type { Broker } from '@iddqueue/core'
import { integerOption, queueName, stringOption } from '../arguments.js'
import { EXIT } from '../cli-io.js'
import type { Command } from '../command.js'
import { importFromCwd } from '../import-from-cwd.js'
import { UsageError } from '../usage-error.js'

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const

/** Resolves with the first of `signals` the process receives. */
function nextSignal(signals: readonly NodeJS.Signals[]): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals) => {
      for (const s of signals) process.off(s, handler)
      resolve(signal)
    }
    for (const s of signals) process.once(s, handler)
  })
}

function isBroker(value: unknown): value is Broker {
  const candidate = value as Partial<Broker> | null | undefined
  return typeof candidate?.worker === 'function' && typeof candidate.close === 'function'
}

/**
 * @internal `iddqueue worker MODULE` imports the application's module that
 * declares its actors and exports its broker, runs a worker until SIGTERM or
 * SIGINT, stops it gracefully and closes the broker. A second signal during
 * the stop ends the process at once (Node's default).
 */
export const workerCommand: Command = {
  name: 'worker',
  operands: ['MODULE'],
  options: {
    queues: { type: 'string', value: 'Q,R' },
    concurrency: { type: 'string', value: 'N' },
    prefetch: { type: 'string', value: 'N' },
    'shutdown-timeout-ms': { type: 'string', value: 'N' },
  },
  summary:
    'run a worker for the broker MODULE exports (as `broker` or default) until SIGTERM or SIGINT; progress on stderr',
  database: false,
  async run(input, io) {
    const moduleName = input.operands[0]!
    const queues = stringOption(input, 'queues')
      ?.split(',')
      .map((queue) => queueName(queue.trim())!)
    const options = {
      queues,
      concurrency: integerOption(input, 'concurrency'),
      prefetch: integerOption(input, 'prefetch'),
      shutdownTimeoutMs: integerOption(input, 'shutdown-timeout-ms'),
    }
    const exports = await importFromCwd(moduleName, io.cwd ?? process.cwd(), 'MODULE')
    const broker = exports.broker ?? exports.default
    if (!isBroker(broker)) {
      throw new UsageError(
        `MODULE: ${moduleName} exports no broker; export the result of createBroker() as \`broker\` or as the default export`,
      )
    }
    try {
      // The module's broker brings its own connection and namespace: a --schema
      // or --prefix that differs would silently watch other tables.
      for (const name of ['schema', 'prefix'] as const) {
        const theirs = broker.namespace[name]
        if (input.given.has(name) && input.global[name] !== theirs) {
          throw new UsageError(
            `--${name} ${JSON.stringify(input.global[name])} differs from the ${name} of the broker ${moduleName} exports (${JSON.stringify(theirs)}); the worker uses the broker's namespace: set it in createBroker({ namespace }) or leave out --${name}`,
          )
        }
      }
      if (input.given.has('url'))
        io.err(
          'iddqueue worker: --url is ignored: the worker uses the connection of the module’s broker\n',
        )
      const worker = broker.worker(options)
      await worker.start()
      const stopped = nextSignal(STOP_SIGNALS)
      const which = queues ? `queues ${queues.join(', ')}` : 'the queues of its actors'
      io.err(`worker ${worker.id} running ${which}; SIGTERM or SIGINT stops it\n`)
      const signal = await stopped
      io.err(`${signal}: stopping; running messages get the shutdown timeout to finish\n`)
      await worker.stop()
      io.err(`worker ${worker.id} stopped\n`)
      return EXIT.ok
    } finally {
      await broker.close()
    }
  },
}
