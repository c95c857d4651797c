import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { attemptHistory, createBroker } from '@iddqueue/core'
import { createDashboard, toNodeHandler } from '@iddqueue/dashboard'
import { scheduler } from '@iddqueue/scheduler'
import { integerOption, stringOption } from '../arguments.js'
import { EXIT } from '../cli-io.js'
import { cliLogger } from '../cli-logger.js'
import type { Command } from '../command.js'
import { UsageError } from '../usage-error.js'

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const

/** The dashboard's default port. */
const DEFAULT_PORT = 9193

/**
 * @internal `iddqueue dashboard` serves `@iddqueue/dashboard` for the
 * namespace of `--schema`/`--prefix` on 127.0.0.1 (only this machine) until
 * SIGTERM or SIGINT; read-only unless `--read-write`.
 */
export const dashboardCommand: Command = {
  name: 'dashboard',
  options: {
    port: { type: 'string', value: 'N' },
    host: { type: 'string', value: 'HOST' },
    'base-path': { type: 'string', value: 'PATH' },
    'read-write': { type: 'boolean' },
  },
  summary: `serve the web dashboard at http://HOST:PORT/ (default 127.0.0.1:${DEFAULT_PORT}, read-only unless --read-write) until SIGTERM or SIGINT`,
  async run(input, io) {
    const port = integerOption(input, 'port') ?? DEFAULT_PORT
    if (port > 65_535) throw new UsageError(`invalid --port ${port}: expected 0 to 65535`)
    const host = stringOption(input, 'host') ?? '127.0.0.1'
    const basePath = stringOption(input, 'base-path') ?? ''
    const readOnly = input.values['read-write'] !== true
    const broker = createBroker({
      url: input.global.url,
      namespace: { schema: input.global.schema, prefix: input.global.prefix },
      poolSize: 4,
      logger: cliLogger(io),
      plugins: [attemptHistory(), scheduler()],
    })
    try {
      const dashboard = createDashboard({
        broker,
        basePath,
        readOnly,
        onAudit: (event) => io.err(`audit ${JSON.stringify(event)}\n`),
      })
      const server = createServer(toNodeHandler(dashboard))
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => resolve())
      })
      const address = server.address() as AddressInfo
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address
      const stopped = new Promise<NodeJS.Signals>((resolve) => {
        const handler = (signal: NodeJS.Signals) => {
          for (const s of STOP_SIGNALS) process.off(s, handler)
          resolve(signal)
        }
        for (const s of STOP_SIGNALS) process.once(s, handler)
      })
      io.err(
        `serving the dashboard at http://${shown}:${address.port}${dashboard.basePath}/ (${readOnly ? 'read-only' : 'read-write'}); SIGTERM or SIGINT stops it\n`,
      )
      const signal = await stopped
      await dashboard.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      io.err(`${signal}: stopped\n`)
      return EXIT.ok
    } finally {
      await broker.close()
    }
  },
}
