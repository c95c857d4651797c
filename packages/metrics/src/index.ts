export {
  type QueueMetrics,
  type QueueMetricsOptions,
  queueMetrics,
} from './prometheus/queue-metrics.js'
export {
  DEFAULT_METRICS_PORT,
  type MetricsServer,
  type ServeMetricsOptions,
  serveMetrics,
} from './prometheus/serve-metrics.js'
export { type QueueStats, type QueueStatsOptions, queueStats } from './stats/queue-stats.js'
export type { StatsSource } from './stats/stats-source.js'
export { TRACE_OPTION, type TraceCarrier } from './tracing/trace-carrier.js'
export { type TraceMode, type TracingOptions, tracing } from './tracing/tracing.js'
export {
  JOB_DURATION_BUCKETS,
  type WorkerMetricsOptions,
  workerMetrics,
} from './worker/worker-metrics.js'
