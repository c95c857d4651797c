export { type FastifyLike, fastifyDashboard } from './adapters/fastify-plugin.js'
export { honoHandler } from './adapters/hono-handler.js'
export { toNodeHandler } from './adapters/node-handler.js'
export { createDashboard, type Dashboard } from './create-dashboard.js'
export type {
  DashboardAction,
  DashboardAuditEvent,
  DashboardOptions,
} from './dashboard-options.js'
