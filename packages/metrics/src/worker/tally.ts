/**
 * @internal Observations of one histogram for one label set, kept as plain
 * numbers: `counts[i]` holds the values in `(bounds[i-1], bounds[i]]`, the
 * rest only add to `count` (the `+Inf` bucket).
 */
export class Buckets {
  readonly counts: Float64Array
  sum = 0
  count = 0

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length)
  }

  observe(value: number): void {
    const bounds = this.bounds
    let i = 0
    while (i < bounds.length && value > bounds[i]!) i++
    if (i < bounds.length) this.counts[i]!++
    this.sum += value
    this.count++
  }
}

/**
 * @internal What the worker metrics count for one (queue, actor), as plain
 * numbers: the event listeners only add to these, and the prom-client
 * metrics read them when scraped, so a message costs a few additions
 * instead of a label lookup per metric.
 */
export class Tally {
  enqueued = 0
  done = 0
  failed = 0
  retried = 0
  rejected = 0
  cancelled = 0
  skipped = 0
  running = 0
  readonly duration: Buckets
  readonly wait: Buckets
  readonly labels: { readonly queue: string; readonly actor: string }

  constructor(queue: string, actor: string, bounds: readonly number[]) {
    this.labels = { queue, actor }
    this.duration = new Buckets(bounds)
    this.wait = new Buckets(bounds)
  }
}

/** @internal Tallies by queue, then actor. */
export class Tallies {
  readonly #byQueue = new Map<string, Map<string, Tally>>()

  constructor(private readonly bounds: readonly number[]) {}

  of(queue: string, actor: string): Tally {
    let byActor = this.#byQueue.get(queue)
    if (!byActor) {
      byActor = new Map()
      this.#byQueue.set(queue, byActor)
    }
    let tally = byActor.get(actor)
    if (!tally) {
      tally = new Tally(queue, actor, this.bounds)
      byActor.set(actor, tally)
    }
    return tally
  }

  *[Symbol.iterator](): IterableIterator<Tally> {
    for (const byActor of this.#byQueue.values()) yield* byActor.values()
  }
}
