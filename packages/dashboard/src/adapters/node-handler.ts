import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'

/**
 * Wraps a `(Request) => Promise<Response>` handler (such as a dashboard) as
 * a `node:http` request listener, which is also an Express/Connect
 * middleware: mount the dashboard with the same `basePath` it was created
 * with. Only `node:http` types; no framework is loaded.
 *
 * The request's URL is built from its `Host` header (and
 * `x-forwarded-proto` when `trustProxy` is set), so the dashboard's
 * same-origin check compares what the browser saw.
 *
 * @example
 * import express from 'express'
 * const dashboard = createDashboard({ broker, basePath: '/admin/queues' })
 * const app = express()
 * app.use('/admin/queues', toNodeHandler(dashboard))
 * // or: createServer(toNodeHandler(dashboard)).listen(3000, '127.0.0.1')
 */
export function toNodeHandler(
  handler: (request: Request) => Promise<Response>,
  options: { readonly trustProxy?: boolean } = {},
): (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void {
  return (req, res, next) => {
    toRequest(req, options.trustProxy === true, res)
      .then(handler)
      .then((response) => sendResponse(response, res))
      .catch((error: unknown) => {
        if (next) next(error)
        else if (!res.headersSent) {
          res.statusCode = 500
          res.end('Internal Server Error')
        } else res.destroy()
      })
  }
}

/** @internal A fetch Request for a node:http request; aborted when the client goes away. */
export async function toRequest(
  req: IncomingMessage,
  trustProxy: boolean,
  res: ServerResponse,
): Promise<Request> {
  // Express strips its mount path from req.url; originalUrl keeps it.
  const path = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/'
  const forwarded = trustProxy
    ? String(req.headers['x-forwarded-proto'] ?? '')
        .split(',')[0]
        ?.trim()
    : ''
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true
  const protocol = forwarded || (encrypted ? 'https' : 'http')
  const url = new URL(path, `${protocol}://${req.headers.host ?? 'localhost'}`)
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    if (Array.isArray(value)) for (const v of value) headers.append(name, v)
    else headers.set(name, value)
  }
  const controller = new AbortController()
  // The response's 'close' comes once per request: when it was sent, or when the
  // client went away first (a live stream). A listener on the socket instead
  // would pile up on a keep-alive connection, one per request it served.
  res.once('close', () => controller.abort())
  const method = req.method ?? 'GET'
  let body: Uint8Array | undefined
  if (method !== 'GET' && method !== 'HEAD') {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    body = new Uint8Array(Buffer.concat(chunks))
  }
  return new Request(url, { method, headers, signal: controller.signal, ...(body ? { body } : {}) })
}

/** @internal Writes a fetch Response to a node:http response, streaming its body. */
export async function sendResponse(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status
  const cookies = response.headers.getSetCookie()
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') res.setHeader(name, value)
  })
  if (cookies.length > 0) res.setHeader('set-cookie', cookies)
  if (!response.body) {
    res.end()
    return
  }
  res.flushHeaders()
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream)
  res.once('close', () => body.destroy())
  body.on('error', () => res.destroy())
  body.pipe(res)
}
