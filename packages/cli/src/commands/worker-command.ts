import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Broker } from '@iddqueue/core'
import { integerOption, queueName, stringOption } from '../arguments.js'
import { EXIT } from '../cli-io.js'
import type { Command, CommandInput } from '../command.js'
import { importFromCwd } from '../import-from-cwd.js'
import { processCount } from '../supervisor/process-count.js'
import { superviseWorkers } from '../supervisor/worker-supervisor.js'
import { UsageError } from '../usage-error.js'

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const

/**
 * Resolves with the first of `signals` the process receives, or with
 * `disconnect` when it runs under `--processes` and its supervisor is gone.
 */
function nextSignal(
  signals: readonly NodeJS.Signals[],
  supervised = false,
): Promise<NodeJS.Signals | 'disconnect'> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals | 'disconnect') => {
      for (const s of signals) process.off(s, handler)
      process.off('disconnect', onDisconnect)
      resolve(signal)
    }
    const onDisconnect = () => handler('disconnect')
    for (const s of signals) process.once(s, handler)
    if (supervised) process.once('disconnect', onDisconnect)
  })
}

/** The CLI's own entry script, which the supervisor runs once per worker process. */
function cliScript(): string {
  // Bundled, this module sits beside bin.js in dist/.
  const script = fileURLToPath(new URL('./bin.js', import.meta.url))
  return existsSync(script) ? script : fileURLToPath(new URL('../../dist/bin.js', import.meta.url))
}

/** The child's command line: this one's worker options, without the supervisor's. */
function childArgs(input: CommandInput): string[] {
  const args = ['worker', input.operands[0]!]
  for (const name of ['queues', 'concurrency', 'prefetch', 'shutdown-timeout-ms']) {
    const value = stringOption(input, name)
    if (value !== undefined) args.push(`--${name}`, value)
  }
  for (const name of ['schema', 'prefix'] as const) {
    if (input.given.has(name)) args.push(`--${name}`, input.global[name])
  }
  return args
}

function isBroker(value: unknown): value is Broker {
  const candidate = value as Partial<Broker> | null | undefined
  return typeof candidate?.worker === 'function' && typeof candidate.close === 'function'
}

/**
 * @internal `iddqueue worker MODULE` imports the application's module that
 * declares its actors and exports its broker, runs a worker until SIGTERM or
 * SIGINT, stops it gracefully and closes the broker. A second signal during
 * the stop ends the process at once (Node's default). With `--processes N`
 * (or `auto`, the CPU count) it supervises N such worker processes instead
 * (see `superviseWorkers`).
 */
export const workerCommand: Command = {
  name: 'worker',
  operands: ['MODULE'],
  options: {
    queues: { type: 'string', value: 'Q,R' },
    concurrency: { type: 'string', value: 'N' },
    prefetch: { type: 'string', value: 'N' },
    'shutdown-timeout-ms': { type: 'string', value: 'N' },
    processes: { type: 'string', value: 'N|auto' },
    'max-restarts': { type: 'string', value: 'N' },
  },
  summary:
    'run a worker for the broker MODULE exports (as `broker` or default) until SIGTERM or SIGINT, or N worker processes with --processes; progress on stderr',
  database: false,
  async run(input, io) {
    const moduleName = input.operands[0]!
    const processes = stringOption(input, 'processes')
    const maxRestarts = integerOption(input, 'max-restarts')
    if (processes === undefined && maxRestarts !== undefined) {
      throw new UsageError('--max-restarts applies to --processes only')
    }
    if (processes !== undefined) {
      const count = processCount(processes)
      // Checked here, once, rather than by N children failing alike.
      for (const name of ['concurrency', 'prefetch', 'shutdown-timeout-ms'])
        integerOption(input, name)
      stringOption(input, 'queues')
        ?.split(',')
        .map((queue) => queueName(queue.trim()))
      return superviseWorkers(
        {
          processes: count,
          script: cliScript(),
          args: childArgs(input),
          cwd: io.cwd ?? process.cwd(),
          env: io.env,
          restart: maxRestarts === undefined ? undefined : { maxRestarts },
        },
        io,
      )
    }
    const queues = stringOption(input, 'queues')
      ?.split(',')
      .map((queue) => queueName(queue.trim())!)
    const options = {
      queues,
      concurrency: integerOption(input, 'concurrency'),
      prefetch: integerOption(input, 'prefetch'),
      shutdownTimeoutMs: integerOption(input, 'shutdown-timeout-ms'),
    }
    // Under a supervisor (which sets IDDQUEUE_WORKER_PROCESS), the IPC channel
    // only tells that the supervisor is gone: it must not keep this process alive.
    const supervised = io.env.IDDQUEUE_WORKER_PROCESS !== undefined && process.connected
    if (supervised) process.channel?.unref()
    // A supervisor may stop its children while they are still loading: listen
    // from the start there, or the signal's default would kill a child whose
    // worker just registered. Run directly, listening from the worker's start suffices.
    let stopped = supervised ? nextSignal(STOP_SIGNALS, true) : undefined
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
      stopped ??= nextSignal(STOP_SIGNALS)
      await worker.start()
      const which = queues ? `queues ${queues.join(', ')}` : 'the queues of its actors'
      io.err(`worker ${worker.id} running ${which}; SIGTERM or SIGINT stops it\n`)
      const signal = await stopped
      const why = signal === 'disconnect' ? 'the supervisor is gone' : signal
      io.err(`${why}: stopping; running messages get the shutdown timeout to finish\n`)
      await worker.stop()
      io.err(`worker ${worker.id} stopped\n`)
      return EXIT.ok
    } finally {
      await broker.close()
    }
  },
}
