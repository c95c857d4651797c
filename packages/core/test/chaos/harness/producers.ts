/** One send a producer made: how long it took and how it ended. */
export interface SendRecord {
  readonly ms: number
  readonly ok: boolean
  readonly error?: unknown
}

/**
 * Runs `producers` loops that each send one message after the other
 * (`send(i)` with a counter shared by all), recording every send, until
 * `stop()`.
 */
export function sendContinuously(
  producers: number,
  send: (i: number) => Promise<unknown>,
  records: SendRecord[],
): { stop(): Promise<void> } {
  let stopped = false
  let next = 0
  const loops = Array.from({ length: producers }, async () => {
    while (!stopped) {
      const started = performance.now()
      try {
        await send(next++)
        records.push({ ms: performance.now() - started, ok: true })
      } catch (error) {
        records.push({ ms: performance.now() - started, ok: false, error })
        // A producer that just failed backs off a little, as a real one would.
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      // Keep the queue fed without flooding the 2-core machine.
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  })
  return {
    async stop() {
      stopped = true
      await Promise.all(loops)
    },
  }
}

/** Sends `count` messages made by `make(i)` in batches of 1,000 (the batch limit). */
export async function enqueueAll<M>(
  count: number,
  make: (i: number) => M,
  enqueueMany: (messages: readonly M[]) => Promise<unknown>,
): Promise<void> {
  for (let start = 0; start < count; start += 1_000) {
    const size = Math.min(1_000, count - start)
    await enqueueMany(Array.from({ length: size }, (_, j) => make(start + j)))
  }
}
