import { DEFAULT_METRICS_PORT, queueMetrics, serveMetrics } from '@iddqueue/metrics'
import { toNamespace } from '@iddqueue/schema'
import postgres from 'postgres'
import { Registry } from 'prom-client'
import { integerOption, queueName, stringOption } from '../arguments.js'
import { EXIT } from '../cli-io.js'
import type { Command } from '../command.js'
import { UsageError } from '../usage-error.js'

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const

/**
 * @internal `iddqueue metrics serve` runs a standalone Prometheus exporter
 * of the queue gauges (`queueMetrics()` of `@iddqueue/metrics`) until
 * SIGTERM or SIGINT. Each scrape runs one query; a failed one answers 500.
 */
export const metricsServeCommand: Command = {
  name: 'metrics serve',
  options: {
    port: { type: 'string', value: 'N' },
    host: { type: 'string', value: 'HOST' },
    queue: { type: 'string', value: 'Q' },
  },
  summary: `serve the queue gauges for Prometheus at http://HOST:PORT/metrics (default 127.0.0.1:${DEFAULT_METRICS_PORT}) until SIGTERM or SIGINT`,
  async run(input, io) {
    const port = integerOption(input, 'port') ?? DEFAULT_METRICS_PORT
    if (port > 65_535) throw new UsageError(`invalid --port ${port}: expected 0 to 65535`)
    const host = stringOption(input, 'host') ?? '127.0.0.1'
    const queue = queueName(stringOption(input, 'queue'))
    const namespace = toNamespace({ schema: input.global.schema, prefix: input.global.prefix })
    const sql = postgres(input.global.url, {
      max: 1,
      onnotice: () => {},
      connection: { application_name: 'iddqueue-metrics' },
    })
    try {
      const registry = new Registry()
      queueMetrics(sql, { registry, queue, namespace })
      const server = await serveMetrics({ registry, port, host })
      const stopped = new Promise<NodeJS.Signals>((resolve) => {
        const handler = (signal: NodeJS.Signals) => {
          for (const s of STOP_SIGNALS) process.off(s, handler)
          resolve(signal)
        }
        for (const s of STOP_SIGNALS) process.once(s, handler)
      })
      io.err(`serving metrics at ${server.url}; SIGTERM or SIGINT stops it\n`)
      const signal = await stopped
      await server.close()
      io.err(`${signal}: stopped\n`)
      return EXIT.ok
    } finally {
      await sql.end()
    }
  },
}
