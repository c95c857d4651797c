import type { IncomingMessage, ServerResponse } from 'node:http'
import { sendResponse, toRequest } from './node-handler.js'

/** The part of a Fastify instance the plugin uses (structural: Fastify is not a dependency). */
export interface FastifyLike {
  all(
    path: string,
    handler: (
      request: { readonly raw: IncomingMessage },
      reply: { readonly raw: ServerResponse; hijack(): void },
    ) => Promise<void>,
  ): unknown
  addContentTypeParser?(
    contentType: string,
    parser: (request: unknown, payload: unknown, done: (error: null) => void) => void,
  ): unknown
}

/**
 * Mounts a dashboard on Fastify at its `basePath`: routes `basePath` and
 * everything below it to the dashboard, which reads the raw request body
 * itself (the form parser is a pass-through) and writes the raw response
 * (streaming the live events). Fastify is not a dependency: the plugin
 * only uses `all()` and `addContentTypeParser()`.
 *
 * @example
 * import Fastify from 'fastify'
 * const app = Fastify()
 * const dashboard = createDashboard({ broker, basePath: '/admin/queues' })
 * app.register(fastifyDashboard(dashboard))
 * await app.listen({ port: 3000, host: '127.0.0.1' })
 */
export function fastifyDashboard(
  dashboard: ((request: Request) => Promise<Response>) & { readonly basePath: string },
  options: { readonly trustProxy?: boolean } = {},
): (app: FastifyLike, _options: unknown, done?: () => void) => void {
  const plugin = (app: FastifyLike, _options: unknown, done?: () => void) => {
    app.addContentTypeParser?.('application/x-www-form-urlencoded', (_request, _payload, next) =>
      next(null),
    )
    const handle = async (
      request: { readonly raw: IncomingMessage },
      reply: { readonly raw: ServerResponse; hijack(): void },
    ) => {
      reply.hijack()
      const response = await dashboard(
        await toRequest(request.raw, options.trustProxy === true, reply.raw),
      )
      await sendResponse(response, reply.raw)
    }
    const base = dashboard.basePath
    app.all(base || '/', handle)
    app.all(`${base}/*`, handle)
    done?.()
  }
  // Fastify's plugin encapsulation would hide the content-type parser from nothing else: skip it.
  ;(plugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true
  return plugin
}
