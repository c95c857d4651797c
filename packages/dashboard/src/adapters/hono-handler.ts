/**
 * A Hono handler for a dashboard: Hono already speaks `Request` and
 * `Response`, so this only passes `c.req.raw` through. Hono is not a
 * dependency.
 *
 * @example
 * import { Hono } from 'hono'
 * const dashboard = createDashboard({ broker, basePath: '/admin/queues' })
 * const app = new Hono()
 * app.all('/admin/queues', honoHandler(dashboard))
 * app.all('/admin/queues/*', honoHandler(dashboard))
 */
export function honoHandler(
  dashboard: (request: Request) => Promise<Response>,
): (c: { readonly req: { readonly raw: Request } }) => Promise<Response> {
  return (c) => dashboard(c.req.raw)
}
