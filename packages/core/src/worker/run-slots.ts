import type { Run } from './run.js'

/**
 * @internal The runs a worker has in progress, one fixed slot each, at most
 * `concurrency` of them.
 *
 * Not a `Map` keyed by message id: a Map that gains and loses an entry per
 * message rebuilds its hash table every few dozen messages, and V8 keeps each
 * replaced table linked to its successor with its old entries in place. Once
 * a full GC has moved one table to the old generation, every later table, and
 * every run it ever held, survives young-generation GCs until the next full
 * GC: measured on a 50,000-message drain, that promoted almost every message
 * and its row (~1.7 KB each) and grew the heap by ~30 MB. Slots are reused in
 * place and cleared when a run ends, so nothing is left behind.
 */
export class RunSlots {
  readonly #slots: (Run | undefined)[]
  /** Indices of the free slots, used as a stack. */
  readonly #free: Int32Array
  #freeCount: number

  constructor(capacity: number) {
    this.#slots = new Array<Run | undefined>(capacity).fill(undefined)
    this.#free = new Int32Array(capacity)
    for (let i = 0; i < capacity; i++) this.#free[i] = capacity - 1 - i
    this.#freeCount = capacity
  }

  get size(): number {
    return this.#slots.length - this.#freeCount
  }

  /** Takes a free slot for `run`; the worker never starts more runs than its concurrency. */
  add(run: Run): void {
    if (this.#freeCount === 0) throw new Error('RunSlots: no free slot')
    const slot = this.#free[--this.#freeCount]!
    this.#slots[slot] = run
    run.slot = slot
  }

  remove(run: Run): void {
    const slot = run.slot
    if (slot < 0 || this.#slots[slot] !== run) return
    this.#slots[slot] = undefined
    this.#free[this.#freeCount++] = slot
    run.slot = -1
  }

  /** The run of message `id`, if it is running here. */
  find(id: string): Run | undefined {
    for (const run of this.#slots) if (run?.message.id === id) return run
    return undefined
  }

  values(): Run[] {
    return this.#slots.filter((run): run is Run => run !== undefined)
  }
}
