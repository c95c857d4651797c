import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describeValue, InvalidOptionError } from '@iddqueue/schema'
import { type Registry, register } from 'prom-client'

/**
 * Options of {@link serveMetrics}.
 *
 * @example
 * const options: ServeMetricsOptions = { port: 9192, host: '0.0.0.0', registry }
 */
export interface ServeMetricsOptions {
  /** Default 9192 (0 picks a free port). */
  readonly port?: number
  /** Default `'127.0.0.1'`: only this machine can scrape. */
  readonly host?: string
  /** Default prom-client's global `register`. */
  readonly registry?: Registry
  /** The path that serves the metrics. Default `'/metrics'`. */
  readonly path?: string
}

/**
 * A running metrics endpoint.
 *
 * @example
 * const server: MetricsServer = await serveMetrics({ port: 0 })
 * console.log(server.url) // http://127.0.0.1:41234/metrics
 * await server.close()
 */
export interface MetricsServer {
  /** The scrape URL. */
  readonly url: string
  readonly port: number
  /** Stops listening and closes open connections. */
  close(): Promise<void>
}

/**
 * Port of the standalone exporter (9192, as the Python original's).
 *
 * @example
 * const server = await serveMetrics({ port: DEFAULT_METRICS_PORT })
 */
export const DEFAULT_METRICS_PORT = 9192

/**
 * Serves a registry in the Prometheus text format over HTTP, for a
 * standalone exporter or beside a worker. A collection that fails (the
 * database is down) answers 500 with the error, so Prometheus marks the
 * target down (`up == 0`) instead of recording zeros.
 *
 * @example
 * import { queueMetrics, serveMetrics } from '@iddqueue/metrics'
 * import { Registry } from 'prom-client'
 *
 * const registry = new Registry()
 * queueMetrics(broker, { registry })
 * const server = await serveMetrics({ registry, port: 9192, host: '127.0.0.1' })
 * process.on('SIGTERM', () => void server.close())
 */
export async function serveMetrics(options: ServeMetricsOptions = {}): Promise<MetricsServer> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError(
      `Invalid serveMetrics() options ${describeValue(options)}: expected an object`,
    )
  const port = options.port ?? DEFAULT_METRICS_PORT
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new InvalidOptionError(
      `Invalid port ${describeValue(options.port)}: expected an integer from 0 to 65535`,
    )
  }
  const host = options.host ?? '127.0.0.1'
  if (typeof host !== 'string' || host === '') {
    throw new InvalidOptionError(
      `Invalid host ${describeValue(options.host)}: expected a host name or address`,
    )
  }
  const path = options.path ?? '/metrics'
  if (typeof path !== 'string' || !/^\/[^\s?#]*$/.test(path)) {
    throw new InvalidOptionError(
      `Invalid path ${describeValue(options.path)}: expected a URL path starting with / (no query or fragment)`,
    )
  }
  const registry = options.registry ?? register
  if (!isRegistry(registry)) {
    throw new InvalidOptionError(
      `Invalid registry ${describeValue(options.registry)}: expected a prom-client Registry`,
    )
  }
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost')
    if (url.pathname !== path || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
      return
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType }).end(text)
      },
      (error: unknown) => {
        // A collector may reject with anything: String() throws on some values.
        const text = error instanceof Error ? error.message : describeValue(error)
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`scrape failed: ${text}\n`)
      },
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${shownHost}:${address.port}${path}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeAllConnections()
      }),
  }
}

/** What serveMetrics reads of a registry: its text and content type. */
function isRegistry(value: unknown): value is Pick<Registry, 'metrics' | 'contentType'> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Registry).metrics === 'function' &&
    typeof (value as Registry).contentType === 'string'
  )
}
