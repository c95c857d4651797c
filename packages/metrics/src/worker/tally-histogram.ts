import type { Metric, MetricObjectWithValues, MetricValueWithName, Registry } from 'prom-client'
import type { Buckets } from './tally.js'

/**
 * @internal A histogram metric whose observations are kept elsewhere as
 * {@link Buckets} (one per label set) and read at scrape time, in the shape
 * prom-client's own histograms export (`_bucket` with `le`, `_sum`, `_count`).
 * prom-client's `Histogram` hashes its labels on every `observe()`, which
 * cost a drain several microseconds a message.
 */
export class TallyHistogram {
  readonly type = 'histogram'
  readonly aggregator = 'sum'

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    private readonly read: () => Iterable<{
      readonly labels: Readonly<Record<string, string>>
      readonly buckets: Buckets
    }>,
  ) {}

  register(registry: Registry): void {
    registry.registerMetric(this as unknown as Metric)
  }

  get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    const values: MetricValueWithName<string>[] = []
    for (const { labels, buckets } of this.read()) {
      let cumulative = 0
      buckets.bounds.forEach((bound, i) => {
        cumulative += buckets.counts[i]!
        values.push({
          labels: { le: bound, ...labels },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        })
      })
      values.push(
        {
          labels: { le: '+Inf', ...labels },
          value: buckets.count,
          metricName: `${this.name}_bucket`,
        },
        { labels: { ...labels }, value: buckets.sum, metricName: `${this.name}_sum` },
        { labels: { ...labels }, value: buckets.count, metricName: `${this.name}_count` },
      )
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type as never,
      values,
      aggregator: this.aggregator,
      collect: () => undefined,
    })
  }

  /** Forgets every observation (`registry.resetMetrics()` calls it). */
  reset(): void {
    for (const { buckets } of this.read()) {
      buckets.counts.fill(0)
      buckets.sum = 0
      buckets.count = 0
    }
  }
}
