interface Pending<T> {
  readonly item: T
  readonly resolve: () => void
  readonly reject: (error: unknown) => void
}

/**
 * @internal Coalesces writes: items added in the same turn of the event loop,
 * or while a write is in flight, go out together in the next write, so many
 * messages starting at once cost one round trip instead of one each. Each
 * `add` resolves when its item is written and rejects when its batch failed.
 */
export class BatchWriter<T> {
  #pending: Pending<T>[] = []
  #scheduled = false
  #writing = false

  constructor(
    private readonly write: (items: readonly T[]) => Promise<void>,
    private readonly maxBatch = 1000,
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ item, resolve, reject })
      if (this.#scheduled || this.#writing) return
      this.#scheduled = true
      setImmediate(() => {
        this.#scheduled = false
        void this.#run()
      })
    })
  }

  async #run(): Promise<void> {
    this.#writing = true
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, this.maxBatch)
      try {
        await this.write(batch.map((pending) => pending.item))
        for (const pending of batch) pending.resolve()
      } catch (error) {
        for (const pending of batch) pending.reject(error)
      }
    }
    this.#writing = false
  }
}
