import { type QueueStats, queueStats } from '@iddqueue/metrics'
import type { DashboardData } from '../data/dashboard-data.js'
import type { Throughput } from '../data/throughput.js'
import { ThroughputCache } from './throughput-cache.js'

type Client = (event: string, data: string) => void

/**
 * @internal The dashboard's one shared poll and its live clients. While at
 * least one Server-Sent Events stream is open (a visible tab: the page's
 * script closes its stream while hidden) it reads `queueStats()` (with
 * `retained: 'estimate'`) and the one-hour chart every `pollIntervalMs`,
 * and sooner when the broker's single LISTEN connection hears a wake-up;
 * when either changed it tells every stream once. With no stream open
 * nothing is polled. Views read the same cached snapshot, so N tabs cost
 * one statistics query per interval, not N. The chart's counts of past
 * minutes are kept across reads (`ThroughputCache`), so a read counts only
 * what finished since the previous one.
 */
export class LiveHub {
  readonly #clients = new Set<Client>()
  #stats: { at: number; value: Promise<QueueStats[]> } | undefined
  #throughput: { at: number; value: Promise<Map<string, Throughput>> } | undefined
  readonly #chart: ThroughputCache
  #timer: ReturnType<typeof setTimeout> | undefined
  #soon: ReturnType<typeof setTimeout> | undefined
  #unlisten: Promise<() => Promise<void>> | undefined
  #last = ''
  #closed = false
  /**
   * Statistics reads run (the polls, and a view's read of a snapshot older
   * than the interval), for tests and the docs' claim that tabs share one.
   */
  polls = 0

  constructor(
    private readonly data: DashboardData,
    private readonly pollIntervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {
    this.#chart = new ThroughputCache(data, onError)
  }

  /** The statistics snapshot, at most one poll interval old. */
  stats(): Promise<QueueStats[]> {
    const now = Date.now()
    if (this.#stats && now - this.#stats.at < this.pollIntervalMs) return this.#stats.value
    // Sampled retained totals: a snapshot costs the same at any retention
    // (docs/performance.md); the last hour comes from the chart's kept counts.
    const value = queueStats(this.data.broker, { retained: 'estimate', lastHour: false })
    this.polls++
    this.#stats = { at: now, value }
    value.catch(() => {
      if (this.#stats?.value === value) this.#stats = undefined
    })
    return value
  }

  /**
   * Finished messages per minute over the last hour, per queue ('' for all),
   * at most one poll interval old.
   */
  throughput(): Promise<Map<string, Throughput>> {
    const now = Date.now()
    if (this.#throughput && now - this.#throughput.at < this.pollIntervalMs)
      return this.#throughput.value
    const value = this.#chart.read()
    this.#throughput = { at: now, value }
    value.catch(() => {
      if (this.#throughput?.value === value) this.#throughput = undefined
    })
    return value
  }

  /** Number of open streams. */
  get size(): number {
    return this.#clients.size
  }

  /**
   * @internal For tests: true while anything can still start a poll (a timer
   * armed, a notification's poll due, or the streams' LISTEN held); false
   * with no stream open.
   */
  get polling(): boolean {
    return this.#timer !== undefined || this.#soon !== undefined || this.#unlisten !== undefined
  }

  /** @internal For tests: resolves once the open streams' LISTEN is in place (at once with none). */
  async listening(): Promise<void> {
    await this.#unlisten
  }

  /** Adds a stream; the returned function removes it. The first starts the poll and the LISTEN. */
  add(client: Client): () => void {
    this.#clients.add(client)
    if (this.#clients.size === 1) this.#start()
    return () => {
      if (!this.#clients.delete(client)) return
      if (this.#clients.size === 0) this.#stop()
    }
  }

  #start(): void {
    const { broker, ns } = this.data
    const channels = [ns.channel('wake'), ns.channel('control')]
    this.#unlisten = Promise.all(
      channels.map((channel) => broker.subscribe(channel, () => this.#pollSoon())),
    ).then(
      (stops) => async () => {
        await Promise.all(stops.map((stop) => stop()))
      },
      (error: unknown) => {
        this.onError(error)
        return async () => {}
      },
    )
    this.#schedule()
  }

  #stop(): void {
    clearTimeout(this.#timer)
    clearTimeout(this.#soon)
    this.#timer = undefined
    this.#soon = undefined
    const unlisten = this.#unlisten
    this.#unlisten = undefined
    void unlisten?.then((stop) => stop())
  }

  #schedule(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#closed || this.#clients.size === 0) return
    this.#timer = setTimeout(() => void this.#poll(), this.pollIntervalMs)
  }

  /** A notification: poll shortly, coalescing a burst of them into one read. */
  #pollSoon(): void {
    if (this.#soon || this.#clients.size === 0) return
    this.#soon = setTimeout(() => {
      this.#soon = undefined
      this.#stats = undefined
      this.#throughput = undefined
      void this.#poll()
    }, 100)
  }

  async #poll(): Promise<void> {
    try {
      const [stats, chart] = await Promise.all([this.stats(), this.throughput()])
      // The chart of all queues moves when any queue's does (and as minutes pass).
      const snapshot = JSON.stringify([stats, chart.get('')])
      if (snapshot !== this.#last) {
        this.#last = snapshot
        for (const client of this.#clients) client('change', String(Date.now()))
      }
    } catch (error) {
      this.onError(error)
    } finally {
      this.#schedule()
    }
  }

  /** Ends every stream and stops polling. */
  async close(): Promise<void> {
    this.#closed = true
    for (const client of this.#clients) client('close', '')
    this.#clients.clear()
    const unlisten = this.#unlisten
    this.#stop()
    await unlisten?.then((stop) => stop())
    await this.#chart.settled()
  }
}
